"""IngestConfig: ``graphtx ingest`` (the ``ingest:`` section of a config YAML)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class IngestConfig:
    format: str | None = None  # force one reader for all inputs; None = detect per file
    workers: int = 1  # parsing processes; splitting files stays in the main process
    chunk_size: int = 8  # records per task sent to a worker
    max_record_mb: float = 64.0  # a record larger than this is skipped (and listed), not parsed
    rows_per_group: int = 512  # documents per Parquet row group: bounds writer memory

    def __post_init__(self) -> None:
        if self.workers < 1 or self.chunk_size < 1 or self.rows_per_group < 1:
            raise ValueError("ingest.workers, chunk_size and rows_per_group must be >= 1")
        if self.max_record_mb <= 0:
            raise ValueError("ingest.max_record_mb must be > 0")
