"""Stepwise fine-tuning (docs/finetuning.md): SFT/DPO export from the train split and TRL+PEFT fine-tuning."""
