"""minigpt: a small PyTorch GPT trainer that speaks Megatron-LM's command line and log format."""
