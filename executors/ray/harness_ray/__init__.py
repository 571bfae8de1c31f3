"""harness-ray: the `ray` batch executor (`harness batch --engine ray`): every attempt of a task a Ray task on a
node that offers the resources asked for, its run's log lines streamed back to the driver.

Layer: executor plugin (registers through `harness_register_executors`). Importing it imports neither Ray nor any
provider: Ray is imported when a batch starts on it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness_core import hookimpl

from harness_ray.executor import Placement, RayExecutor
from harness_ray.options import RayOptions

__all__ = ["Placement", "RayExecutor", "RayOptions", "harness_register_executors"]


@hookimpl
def harness_register_executors(register: Callable[[type[Any]], None]) -> None:
    register(RayExecutor)
