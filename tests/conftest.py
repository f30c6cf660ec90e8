"""Shared test fixtures: the real CloudPhysics trace beside the checkout, deterministic settings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("TIERINGLAB_PROGRESS", "0")
os.environ.setdefault("MPLBACKEND", "Agg")

import tieringlab  # noqa: E402,F401  (enables x64 before any test imports jax)

REPO = Path(__file__).resolve().parent.parent
CLOUDPHYSICS = REPO.parent / "shared" / "data" / "cloudphysics" / "cloudPhysicsIO.csv"


@pytest.fixture(scope="session")
def cloudphysics_path() -> Path:
    """The real CloudPhysics trace in ../shared (CI has it; skip where a checkout lacks it)."""
    if not CLOUDPHYSICS.is_file():
        pytest.skip(f"{CLOUDPHYSICS} not present")
    return CLOUDPHYSICS
