"""Source adapters: each turns one public dataset into `Record`s for the danger extractor."""
