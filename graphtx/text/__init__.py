"""Token-level pre-training: a BPE tokenizer and FastText token vectors (`graphtx pretrain`)."""
