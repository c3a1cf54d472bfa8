"""The build backend of the memgate Python package (PEP 517, PEP 660).

It needs nothing but the standard library, so the package installs in a
plain ``python3 -m venv`` without network and without ``setuptools`` or
``wheel`` (which a Python 3.12 venv does not have, and an older one has
without ``wheel``): ``pip install ./clients/python`` or, offline,
``pip install --no-build-isolation ./clients/python``.

The package is pure Python: the wheel is ``src/memgate`` (sources and
``py.typed``) and its ``.dist-info``; the sdist is this directory's files
that a build reads. The version is ``__version__`` in
``src/memgate/client.py``, the one place it is written. Archives are
reproducible: sorted entries with the time of $SOURCE_DATE_EPOCH (else
1980-01-01) and fixed permissions.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
PACKAGE = "memgate"
NAME = "memgate"
SUMMARY = "Client for the memgate HTTP API: governed long-term memory for AI agents"
REQUIRES_PYTHON = ">=3.9"
LICENSE = "MIT"
CLASSIFIERS = [
    "License :: OSI Approved :: MIT License",
    "Programming Language :: Python :: 3",
    "Typing :: Typed",
]
TAG = "py3-none-any"
# The files of this directory an sdist carries (besides src/).
SDIST_FILES = ["pyproject.toml", "README.md", "LICENSE", "_backend/memgate_build.py"]


def version() -> str:
    text = (SRC / PACKAGE / "client.py").read_text(encoding="utf-8")
    m = re.search(r'^__version__ = "([^"]+)"$', text, re.M)
    if not m:
        raise RuntimeError("src/memgate/client.py has no __version__ line")
    return m.group(1)


def _dist_info() -> str:
    return f"{NAME}-{version()}.dist-info"


def _metadata() -> bytes:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {NAME}",
        f"Version: {version()}",
        f"Summary: {SUMMARY}",
        f"License: {LICENSE}",
        f"Requires-Python: {REQUIRES_PYTHON}",
    ]
    lines += [f"Classifier: {c}" for c in CLASSIFIERS]
    lines.append("Description-Content-Type: text/markdown")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return ("\n".join(lines) + "\n\n" + readme).encode("utf-8")


def _wheel_file() -> bytes:
    return (
        "Wheel-Version: 1.0\n"
        "Generator: memgate_build\n"
        "Root-Is-Purelib: true\n"
        f"Tag: {TAG}\n"
    ).encode("utf-8")


def _package_files() -> List[Tuple[str, bytes]]:
    out = []
    for p in sorted((SRC / PACKAGE).rglob("*")):
        if not p.is_file() or "__pycache__" in p.parts or p.suffix in (".pyc", ".pyo"):
            continue
        out.append((p.relative_to(SRC).as_posix(), p.read_bytes()))
    return out


def _dist_info_files() -> List[Tuple[str, bytes]]:
    di = _dist_info()
    return [
        (f"{di}/METADATA", _metadata()),
        (f"{di}/WHEEL", _wheel_file()),
        (f"{di}/licenses/LICENSE", (ROOT / "LICENSE").read_bytes()),
    ]


def _epoch() -> int:
    return max(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")), 315532800)


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode("ascii")


def _write_wheel(directory: str, files: List[Tuple[str, bytes]]) -> str:
    files = files + _dist_info_files()
    record_name = f"{_dist_info()}/RECORD"
    record = "".join(f"{name},{_record_hash(data)},{len(data)}\n" for name, data in files)
    record += f"{record_name},,\n"
    files.append((record_name, record.encode("utf-8")))
    filename = f"{NAME}-{version()}-{TAG}.whl"
    stamp = time.gmtime(_epoch())[:6]
    with zipfile.ZipFile(os.path.join(directory, filename), "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files:
            info = zipfile.ZipInfo(name, date_time=stamp)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return filename


def _write_metadata(directory: str) -> str:
    di = Path(directory) / _dist_info()
    for name, data in _dist_info_files():
        p = Path(directory) / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return di.name


# PEP 517 hooks.


def get_requires_for_build_wheel(config_settings: Optional[Dict] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[Dict] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[Dict] = None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Optional[Dict] = None) -> str:
    return _write_metadata(metadata_directory)


def prepare_metadata_for_build_editable(metadata_directory: str, config_settings: Optional[Dict] = None) -> str:
    return _write_metadata(metadata_directory)


def build_wheel(wheel_directory: str, config_settings: Optional[Dict] = None, metadata_directory: Optional[str] = None) -> str:
    return _write_wheel(wheel_directory, _package_files())


def build_editable(wheel_directory: str, config_settings: Optional[Dict] = None, metadata_directory: Optional[str] = None) -> str:
    # A .pth line puts src/ on sys.path: edits to the checkout show at once.
    return _write_wheel(wheel_directory, [(f"__editable__.{NAME}.pth", (str(SRC) + "\n").encode("utf-8"))])


def build_sdist(sdist_directory: str, config_settings: Optional[Dict] = None) -> str:
    base = f"{NAME}-{version()}"
    files = [(f, (ROOT / f).read_bytes()) for f in SDIST_FILES]
    files += [("src/" + name, data) for name, data in _package_files()]
    files.append(("PKG-INFO", _metadata()))
    filename = f"{base}.tar.gz"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for name, data in sorted(files):
            info = tarfile.TarInfo(f"{base}/{name}")
            info.size, info.mtime, info.mode = len(data), _epoch(), 0o644
            tf.addfile(info, io.BytesIO(data))
    with open(os.path.join(sdist_directory, filename), "wb") as f:
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=_epoch()) as gz:
            gz.write(buf.getvalue())
    return filename
