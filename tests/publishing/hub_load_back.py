"""Run in a fresh process (HF_ENDPOINT etc. set before huggingface_hub/datasets are imported):
read a published release back from the Hub as its users do, and print what the test asserts on,
as JSON: `datasets.load_dataset`, the Hub's own reading of the card (`dataset_info`, the card's
validation), and a snapshot of every file (downloaded into SNAPSHOT_DIR).

usage: python hub_load_back.py ORG/NAME VERSION SNAPSHOT_DIR
"""

import json
import sys

import datasets
from huggingface_hub import DatasetCard, HfApi, hf_hub_download, snapshot_download

from safeforge.publishing import features

repo_id, version, snapshot_dir = sys.argv[1], sys.argv[2], sys.argv[3]
table = datasets.load_dataset(repo_id, revision=version)["train"]
refs = HfApi().list_repo_refs(repo_id, repo_type="dataset")
readme = hf_hub_download(repo_id, "README.md", repo_type="dataset", revision=version)
DatasetCard.load(readme).validate(repo_type="dataset")  # raises when the Hub rejects the card
info = HfApi().dataset_info(repo_id, revision=version)
snapshot_download(repo_id, repo_type="dataset", revision=version, local_dir=snapshot_dir)
print(
    json.dumps(
        {
            "task_ids": list(table["task_id"]),
            "llm_endpoints": list(table["llm_endpoint"]),
            "features_match": table.features == features(),
            "card": open(readme, encoding="utf-8").read(),
            "files": sorted(HfApi().list_repo_files(repo_id, repo_type="dataset", revision=version)),
            "tags": [t.name for t in refs.tags],
            "card_license": info.card_data.license if info.card_data else None,
            "hub_tags": info.tags,
        }
    )
)
