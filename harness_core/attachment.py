"""A file or image a run gives its agent with the prompt (`Attachment`), and its check before spawn.

Layer: core model. The model does no I/O (its type is guessed from the name); `check_attachment` reads the file's
size before anything is spawned. Knows nothing of how a provider's CLI takes it.
"""

from __future__ import annotations

import functools
import mimetypes
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = ["API_IMAGE_TYPES", "MAX_ATTACHMENT_BYTES", "Attachment", "AttachmentKind", "check_attachment",
           "guess_mime_type", "media_type_matches"]

MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024
"""The largest attachment a run takes (20 MiB: what the model APIs take for one image or document)."""
AttachmentKind = Literal["image", "file"]
API_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""The image types the model APIs take (Anthropic's and OpenAI's): what a provider sending images declares in
`ProviderInfo.attachment_types` (an SVG, BMP, TIFF or HEIC then goes in the prompt as its path)."""


@functools.cache
def _python_types() -> mimetypes.MimeTypes:
    """Python's own table only (not the system's `/etc/mime.types`), so a name means the same type on every machine.
    Made on first use: making one reads the system's tables into `mimetypes` first (~8 ms of CPU, measured), which
    a process that guesses no type does not need."""
    return mimetypes.MimeTypes(filenames=())


_EXTRA_TYPES = {".md": "text/markdown", ".webp": "image/webp", ".yaml": "application/yaml",
                ".yml": "application/yaml", ".toml": "application/toml", ".rs": "text/x-rust", ".go": "text/x-go",
                ".ts": "text/x-typescript", ".jsonl": "application/jsonl"}


class Attachment(BaseModel):
    """An image or file sent with the prompt: a `path`, or `data` (bytes, from Python) with a `name`.

    `mime_type` is guessed from the name's suffix when not given (an unknown suffix is refused: give it).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", ser_json_bytes="base64", val_json_bytes="base64")

    path: Path | None = Field(default=None, description="The file to send (absolute once given).")
    data: bytes | None = Field(default=None, description="The bytes to send, instead of a path (Python only).")
    mime_type: str = Field(default="", description="Its media type (`image/png`, `application/pdf`, ...); guessed "
                           "from the name when empty.")
    name: str = Field(default="", description="Its file name; the path's name when empty.")

    @model_validator(mode="before")
    @classmethod
    def _fill_in(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        path = data.get("path")
        if path is not None and not data.get("name"):
            data["name"] = Path(path).name
        if not data.get("mime_type") and data.get("name"):
            data["mime_type"] = guess_mime_type(str(data["name"]))
        return data

    @field_validator("path")
    @classmethod
    def _absolute_path(cls, value: Path | None) -> Path | None:
        return value.expanduser().absolute() if value is not None else None

    @model_validator(mode="after")
    def _one_source(self) -> Attachment:
        if (self.path is None) == (self.data is None):
            raise ValueError("an attachment is a `path` or `data` (bytes with a `name`): give exactly one")
        if not self.name:
            raise ValueError("an attachment given as `data` needs a `name` (its file name, e.g. `chart.png`)")
        if not self.mime_type:
            raise ValueError(f"the type of attachment {self.name!r} is unknown from its name: give its `mime_type` "
                             "(`Attachment.of(path, mime_type=\"text/plain\")`; in a task line {\"path\": ..., "
                             "\"mime_type\": \"text/plain\"}); `--attach FILE` on the command line takes it as "
                             "text/plain when it is UTF-8 text, else application/octet-stream")
        if "/" not in self.mime_type:
            raise ValueError(f"attachment {self.name!r}: mime_type {self.mime_type!r} is not a media type "
                             "(`image/png`, `text/plain`, ...)")
        return self

    @property
    def kind(self) -> AttachmentKind:
        """`image` for an image type, else `file`."""
        return "image" if self.mime_type.startswith("image/") else "file"

    @classmethod
    def of(cls, path: str | os.PathLike[str], mime_type: str = "") -> Attachment:
        """The attachment of the file at `path` (its type guessed from its suffix unless given)."""
        return cls(path=Path(path), mime_type=mime_type)

    def read(self) -> bytes:
        """Its bytes (`data`, or the file's).

        Raises:
            OSError: the file cannot be read, or it grew past `MAX_ATTACHMENT_BYTES` since it was checked (read
                bounded: never more than the limit and one byte).
        """
        if self.data is not None:
            return self.data
        assert self.path is not None
        with self.path.open("rb") as file:
            data = file.read(MAX_ATTACHMENT_BYTES + 1)
        if len(data) > MAX_ATTACHMENT_BYTES:
            raise OSError(f"attachment {self.path} grew past the {MAX_ATTACHMENT_BYTES // 1024 // 1024} MiB limit "
                          "after it was checked: send a smaller file (or a path in the prompt)")
        return data


def guess_mime_type(name: str) -> str:
    """The media type of a file named `name` by its suffix, or "" when unknown."""
    suffix = Path(name).suffix.lower()
    if suffix in _EXTRA_TYPES:
        return _EXTRA_TYPES[suffix]
    guessed, _ = _python_types().guess_type(name, strict=False)
    return guessed or ""


def media_type_matches(mime_type: str, patterns: Iterable[str]) -> bool:
    """Whether `mime_type` is one of `patterns`: a type (`image/png`), a top-level type (`text/*`) or `*/*`; the
    comparison ignores case and parameters (`; charset=...`)."""
    kind = mime_type.split(";", 1)[0].strip().lower()
    top = kind.split("/", 1)[0]
    return any(p in ("*/*", kind, f"{top}/*") for p in (pattern.lower() for pattern in patterns))


def check_attachment(attachment: Attachment) -> str | None:
    """What keeps `attachment` from being sent (missing, unreadable, a directory, over `MAX_ATTACHMENT_BYTES`),
    with the next step, or None when it can be."""
    if attachment.data is not None:
        size = len(attachment.data)
    else:
        path = attachment.path
        assert path is not None
        try:
            stat = path.stat()
        except FileNotFoundError:
            return f"attachment {str(path)!r} does not exist: check the path"
        except OSError as exc:
            return f"attachment {str(path)!r} cannot be read ({exc.strerror}): check the path and its permissions"
        if not path.is_file():
            return f"attachment {str(path)!r} is not a file: attach a file (a directory cannot be sent)"
        if not os.access(path, os.R_OK):
            return f"attachment {str(path)!r} is not readable: check its permissions"
        size = stat.st_size
    if size > MAX_ATTACHMENT_BYTES:
        return (f"attachment {attachment.name!r} is {size / 1024 / 1024:.1f} MiB, over the "
                f"{MAX_ATTACHMENT_BYTES // 1024 // 1024} MiB limit: send a smaller file (or a path in the prompt)")
    return None
