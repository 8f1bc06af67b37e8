"""Placeholder: the engine-level subcommands (chains, prefill) are added by the engine models work."""


def add_subcommands(subparsers) -> None:  # pragma: no cover - replaced by the engine models
    return None
