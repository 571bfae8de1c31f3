"""What an offline run holds fixed: the caller's options and environment laid over a provider's offline setup.

Layer: offline. Merges the caller's options into the setup's key by key (tables merged, lists joined: never a
whole table replaced), and refuses, naming it and why, an option or variable the setup pins because it decides
where the agent connects. Knows the provider interface (`OfflineSetup`, the options model); no concrete provider.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness_core._provider_interface import OfflineSetup, Provider
from harness_core.errors import InvalidSpecError

__all__ = ["LOOPBACK_ONLY", "deep_merge", "merge_offline"]

LOOPBACK_ONLY = "127.0.0.1,localhost,::1"
"""`NO_PROXY` and `no_proxy` of every offline run: a proxy from the user's environment (`HTTPS_PROXY`, ...) would
otherwise carry the calls to the loopback backend — prompts included — to the proxy's host. A list, not `*`, which
not every agent's HTTP client takes."""
PROXY_BYPASS = {"NO_PROXY": LOOPBACK_ONLY, "no_proxy": LOOPBACK_ONLY}
_PROXY_WHY = "keeps the calls to the loopback backend away from a proxy"


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `over` laid on it key by key: tables merged recursively, lists joined (`base`'s items, then
    those of `over`: an argument list keeps its order and repeats), anything else taken from `over`."""
    merged = dict(base)
    for key, value in over.items():
        mine = merged.get(key)
        if isinstance(mine, Mapping) and isinstance(value, Mapping):
            merged[key] = deep_merge(mine, value)
        elif isinstance(mine, Sequence) and _is_list(mine) and _is_list(value):
            merged[key] = [*mine, *value]
        else:
            merged[key] = value
    return merged


def merge_offline(setup: OfflineSetup, provider: Provider[Any], options: Mapping[str, Any],
                  env: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """The options and environment of an offline run: `setup`'s with the caller's `options` (as the provider's
    options model reads them) merged in, and the caller's `env` over `setup.env` and `PROXY_BYPASS`.

    Raises:
        InvalidSpecError: the options do not validate, or the caller sets what the setup pins (an option at, under
            or above a pinned path, a pinned variable, what `setup.check_options` refuses): the message names it,
            says why, and what to do.
    """
    name = provider.info.name
    given = _as_set(provider, options)
    pinned = setup.pinned_options
    if pinned is None:
        pinned = {".".join(path): "is set by the offline setup" for path in _leaf_paths(setup.provider_options)}
    for path in _leaf_paths(given):
        for pin, why in pinned.items():
            split = tuple(pin.split("."))
            if path[:len(split)] == split or split[:len(path)] == path:
                shown = ".".join(path)
                under = "" if split == path else f" (under {pin})" if len(path) > len(split) else f" (it holds {pin})"
                raise InvalidSpecError(f"offline, option {shown}{under} is not taken: it {why}. {_next(name, shown)}",
                                       provider=name)
    env_pins = dict(setup.pinned_env) if setup.pinned_env is not None else dict.fromkeys(
        setup.env, "is set by the offline setup")
    env_pins.update(dict.fromkeys(PROXY_BYPASS, _PROXY_WHY))
    for variable in env:
        if variable in env_pins:
            raise InvalidSpecError(
                f"offline, environment variable {variable} is not taken: it {env_pins[variable]}. Drop it from the "
                f"spec's env, or run without --offline (an offline run keeps {name} on its scripted model backend "
                "on 127.0.0.1)", provider=name)
    if setup.check_options is not None and (refusal := setup.check_options(given)) is not None:
        raise InvalidSpecError(f"offline, {refusal}. {_next(name, None)}", provider=name)
    merged = deep_merge(_as_set(provider, setup.provider_options), given)
    return merged, {**setup.env, **PROXY_BYPASS, **env}


def _next(name: str, option: str | None) -> str:
    what = f"-o {option}=..." if option is not None else "the option"
    return (f"Drop {what} (or the key of your config's [providers.{name}] table), or run without --offline: an "
            f"offline run keeps {name} on its scripted model backend on 127.0.0.1")


def _as_set(provider: Provider[Any], options: Mapping[str, Any]) -> dict[str, Any]:
    """`options` as the provider's options model reads them (`disable="a,b"` is a list there), only those set."""
    dumped: dict[str, Any] = provider.parse_options(options).model_dump(exclude_unset=True)
    return dumped


def _leaf_paths(options: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Each value's key path, dotted keys split (`{"config": {"a.b": 1}}` → `("config", "a", "b")`); an empty
    table is a leaf of its own."""
    paths: list[tuple[str, ...]] = []
    for key, value in options.items():
        path = (*prefix, *str(key).split("."))
        if isinstance(value, Mapping) and value:
            paths.extend(_leaf_paths(value, path))
        else:
            paths.append(path)
    return paths


def _is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes))
