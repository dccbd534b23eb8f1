"""Run in a fresh process (HF_ENDPOINT etc. set before huggingface_hub/datasets are imported):
load a published release back from the Hub and print what the test asserts on, as JSON.

usage: python hub_load_back.py ORG/NAME VERSION
"""

import json
import sys

import datasets
from huggingface_hub import HfApi, hf_hub_download

from safeforge.publishing import features

repo_id, version = sys.argv[1], sys.argv[2]
table = datasets.load_dataset(repo_id, revision=version)["train"]
refs = HfApi().list_repo_refs(repo_id, repo_type="dataset")
card = open(hf_hub_download(repo_id, "README.md", repo_type="dataset", revision=version)).read()
files = HfApi().list_repo_files(repo_id, repo_type="dataset", revision=version)
info = HfApi().dataset_info(repo_id, revision=version)
print(
    json.dumps(
        {
            "task_ids": list(table["task_id"]),
            "features_match": table.features == features(),
            "safe_plan_lengths": list(table["safe_plan_length"]),
            "card": card,
            "files": sorted(files),
            "tags": [t.name for t in refs.tags],
            "card_license": info.card_data.license if info.card_data else None,
            "hub_tags": info.tags,
        }
    )
)
