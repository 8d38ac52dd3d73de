"""Transactions (KIP-98): the coordinator, its state machine and its log."""
