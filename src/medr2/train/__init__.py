"""Stepwise fine-tuning (DESIGN §10): SFT/DPO export from the train split and TRL+PEFT fine-tuning."""
