"""Bodies of the user API's run-matrix calls (docs/server.md)."""

from typing import Annotated, Any

from pydantic import BaseModel, Field

FactorValues = Annotated[list[Any], Field(min_length=1, max_length=32)]


class MatrixIn(BaseModel):
    """suites × machines × profiles × every combination of the factors' values."""

    machine_ids: Annotated[list[int], Field(min_length=1, max_length=200)]
    suites: Annotated[list[str], Field(min_length=1, max_length=20)]
    profiles: Annotated[list[str], Field(min_length=1, max_length=10)] = ["quick"]
    params: dict[str, Any] = Field(default_factory=dict)
    factors: Annotated[dict[str, FactorValues], Field(max_length=16)] = Field(default_factory=dict)


class MatrixRun(BaseModel):
    run_id: int
    machine_id: int
    suite: str
    profile: str
    job_ids: list[int]


class MatrixCreated(BaseModel):
    matrix_id: int
    runs: list[MatrixRun]


class ReproductionQueued(BaseModel):
    """The matrices that fill every table of the thesis report, as queued on one machine."""

    machine_id: int
    matrices: list[MatrixCreated]
    jobs: int
    estimated_seconds: float  # of the jobs with an estimate (earlier jobs like them)
    unestimated_jobs: int
