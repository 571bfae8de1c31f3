"""Reaching a Ray cluster for a batch: joining the one at an address, or starting a local one on 127.0.0.1 only,
with Ray's usage reporting and dashboard off; and shutting down only what was started here.

Layer: executor plugin (the driver's Ray connection). Knows Ray's start-up and the Harness errors a user gets
when the cluster cannot be used; knows nothing of attempts, runs or providers.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import tempfile
from dataclasses import dataclass
from typing import Any

from harness_core import InvalidSpecError, SpawnFailedError

__all__ = ["RAY_MISSING", "Cluster", "connect", "quiet_environment", "ray_installed"]

RAY_MISSING = ("--engine ray needs Ray, which is not installed here: `pip install -e 'executors/ray[ray]'` in "
               "Harness's repository (or `pip install 'ray>=2.50'`; about 80 MB to download, 240 MB installed)")

QUIET = {
    "RAY_USAGE_STATS_ENABLED": "0",  # no usage report sent anywhere
    "RAY_USAGE_STATS_PROMPT_ENABLED": "0",
    "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0",  # never resolve packages with uv on the nodes
}
LOOPBACK = {
    # On Linux Ray replaces 127.0.0.1 by the machine's routable address unless clusters are "unsupported" here:
    # this is what keeps a local cluster (its node address and everything it connects to) on the loopback.
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
}
_START_HINT = ("start one with `ray start --head --node-ip-address 127.0.0.1` (on a cluster: `ray start --head` on "
               "the head, `ray start --address HEAD:6379 --resources '{\"harness-codex\": 1}'` on each node that has "
               "the agent CLI), or leave --address out for a local cluster")


def ray_installed() -> bool:
    """Whether Ray can be imported here (asked without importing it: that takes seconds)."""
    try:
        return importlib.util.find_spec("ray") is not None
    except (ImportError, ValueError):  # a `ray` in sys.modules that is None (blocked), or without a spec
        return False


def quiet_environment(*, local: bool) -> None:
    """Turn Ray's phone-home off (and, for a local cluster, keep it on 127.0.0.1) in this process's environment,
    which the processes Ray starts inherit. Values the user set are kept."""
    for key, value in {**QUIET, **(LOOPBACK if local else {})}.items():
        os.environ.setdefault(key, value)


@dataclass
class Cluster:
    """The Ray connection a batch plays on."""

    address: str | None
    """What the user asked to join (None: the local cluster started here)."""
    owned: bool
    """Whether `connect` called `ray.init` (and `close` must shut Ray down)."""
    temp_dir: str | None = None
    """A local cluster's own Ray directory (sessions, sockets, logs), removed at `close`."""

    def describe(self) -> str:
        import ray

        api: Any = ray
        nodes = [n for n in api.nodes() if n.get("Alive")]
        cpus = int(api.cluster_resources().get("CPU", 0))
        if self.address is None and self.owned:
            return f"ray (local cluster, {cpus} CPU{'s' if cpus != 1 else ''})"
        where = self.address or "the cluster this program joined"
        return f"ray at {where}, {len(nodes)} node{'s' if len(nodes) != 1 else ''}, {cpus} CPUs"

    def close(self) -> None:
        if self.owned:
            import ray

            ray.shutdown()
            self.owned = False
        if self.temp_dir is not None:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
            self.temp_dir = None


def connect(address: str | None, *, local_cpus: int | None, connect_timeout: float) -> Cluster:
    """Join the cluster at `address` or start a local one (address None). Ray initialised already by the
    program itself is used as it is (and left running at the end).

    Raises:
        SpawnFailedError: nothing answers at `address`, or Ray would not start; the message says what to do.
        InvalidSpecError: `address` is not `auto` or HOST:PORT.
    """
    local = address is None
    quiet_environment(local=local)
    import ray

    if ray.is_initialized():
        return Cluster(address, owned=False)
    options: dict[str, Any] = {"include_dashboard": False, "configure_logging": False, "log_to_driver": False}
    if local:
        _keep_on_loopback()
        temp_dir = tempfile.mkdtemp(prefix="harness-ray-")
        try:
            # "local": a new cluster even when RAY_ADDRESS or another cluster of this machine is around
            ray.init(address="local", num_cpus=local_cpus, _node_ip_address="127.0.0.1", _temp_dir=temp_dir,
                     **options)
        except Exception as exc:
            shutil.rmtree(temp_dir, ignore_errors=True)
            raise SpawnFailedError(f"could not start a local Ray cluster: {exc}; see `ray status`, or join a "
                                   "running one with --address") from exc
        return Cluster(None, owned=True, temp_dir=temp_dir)
    assert address is not None
    target = _head_address(address)
    _check_reachable(target, address, connect_timeout)
    try:
        ray.init(address=target, **options)
    except Exception as exc:
        raise SpawnFailedError(f"could not join the Ray cluster at {address}: {exc}; {_START_HINT}") from exc
    return Cluster(address, owned=True)


def _keep_on_loopback() -> None:
    from ray._private import ray_constants

    if getattr(ray_constants, "ENABLE_RAY_CLUSTER", False):  # Ray was imported before our environment was set
        ray_constants.ENABLE_RAY_CLUSTER = False


def _head_address(address: str) -> str:
    """`address` as HOST:PORT of the head (`auto`: RAY_ADDRESS or the cluster `ray start` left on this machine)."""
    if address.startswith("ray://"):
        raise InvalidSpecError(f"--address {address}: Ray Client addresses (ray://) cannot stream attempts; give "
                               "the head's GCS address HOST:PORT (port 6379 by default) or run the batch on a node")
    if address == "auto":
        from ray._private import services

        try:
            found = services.canonicalize_bootstrap_address("auto")
        except Exception as exc:
            raise SpawnFailedError(f"--address auto: no Ray cluster found on this machine ({exc}); {_START_HINT}") \
                from exc
        if found is None:
            raise SpawnFailedError(f"--address auto: no Ray cluster found on this machine; {_START_HINT}")
        return str(found)
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise InvalidSpecError(f"--address {address!r} is not HOST:PORT (e.g. 10.0.0.5:6379) nor `auto`")
    return address


def _check_reachable(target: str, address: str, timeout: float) -> None:
    host, _, port = target.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except OSError as exc:
        raise SpawnFailedError(f"no Ray cluster answers at {address} ({target}: {exc.strerror or exc}); "
                               f"{_START_HINT}") from None
