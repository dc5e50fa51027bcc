"""A throw-away PostgreSQL cluster for the tests: initdb in a temporary folder, a Unix socket only (no TCP
port), started as the ``postgres`` user when the tests run as root (postgres refuses root), stopped and
removed afterwards. Skips where the server binaries (Debian's postgresql package:
/usr/lib/postgresql/*/bin) or the psycopg driver are absent, except where CI sets
``NF_REQUIRE_POSTGRES=1``: it fails there instead."""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import shutil
import subprocess
import tempfile

import pytest

BIN = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
_names = itertools.count()


def unavailable(reason: str):
    """Skip where PostgreSQL cannot run, except where it must (CI sets NF_REQUIRE_POSTGRES=1): fail there."""
    if os.environ.get("NF_REQUIRE_POSTGRES"):
        pytest.fail(f"PostgreSQL is required here (NF_REQUIRE_POSTGRES) but {reason}")
    pytest.skip(reason)


@contextlib.contextmanager
def cluster(fsync: bool = False):
    """Start a cluster; yields the DSN of its ``postgres`` database (user ``nf``, trusted)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        unavailable("the psycopg driver is not installed (pip install 'noisyfeedback[postgres]')")
    if not BIN:
        unavailable("no PostgreSQL server binaries (apt-get install postgresql)")
    bindir = os.path.dirname(BIN[-1])
    root = tempfile.mkdtemp(prefix="nf-pg-")
    prefix = []
    if os.geteuid() == 0:  # postgres refuses to run as root
        if shutil.which("runuser") is None:
            shutil.rmtree(root, ignore_errors=True)
            unavailable("running as root without runuser")
        try:
            shutil.chown(root, "postgres")
        except LookupError:
            shutil.rmtree(root, ignore_errors=True)
            unavailable("running as root and there is no 'postgres' user")
        prefix = ["runuser", "-u", "postgres", "--"]
    data = os.path.join(root, "data")
    run = lambda *a: subprocess.run(prefix + list(a), check=True, capture_output=True, timeout=60)  # noqa: E731
    try:
        run(f"{bindir}/initdb", "-D", data, "-A", "trust", "-U", "nf", "--no-sync", "-E", "UTF8")
        run(f"{bindir}/pg_ctl", "-D", data, "-o",
            f"-k {root} -c listen_addresses='' -c fsync={'on' if fsync else 'off'} -c max_connections=200",
            "-l", os.path.join(root, "log"), "-w", "-t", "30", "start")
    except (subprocess.SubprocessError, OSError) as exc:
        shutil.rmtree(root, ignore_errors=True)
        unavailable(f"could not start PostgreSQL: {exc}")
    try:
        yield f"postgresql:///postgres?host={root}&user=nf"
    finally:
        subprocess.run(prefix + [f"{bindir}/pg_ctl", "-D", data, "-m", "immediate", "stop"], capture_output=True,
                       timeout=60)
        shutil.rmtree(root, ignore_errors=True)


def restart(dsn: str, down: float = 0.0, times: dict | None = None) -> None:
    """Restart the server of a cluster from :func:`cluster` (``pg_ctl stop -m fast``, ``down`` seconds
    without a server, then start with the same options): every connection to it is closed. ``times``
    gets the ``time.monotonic()`` of each step: "stop" (asked), "stopped", "start" (asked), "up"."""
    import time

    times = {} if times is None else times
    from urllib.parse import parse_qs, urlparse

    root = parse_qs(urlparse(dsn).query)["host"][0]
    data = os.path.join(root, "data")
    bindir = os.path.dirname(BIN[-1])
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    times["stop"] = time.monotonic()
    subprocess.run(prefix + [f"{bindir}/pg_ctl", "-D", data, "-m", "fast", "-w", "-t", "30", "stop"], check=True,
                   capture_output=True, timeout=60)
    times["stopped"] = time.monotonic()
    time.sleep(down)
    times["start"] = time.monotonic()
    subprocess.run(prefix + [f"{bindir}/pg_ctl", "-D", data, "-o", f"-k {root} -c listen_addresses='' -c fsync=off "
                             "-c max_connections=200", "-l", os.path.join(root, "log"), "-w", "-t", "30", "start"],
                   check=True, capture_output=True, timeout=60)
    times["up"] = time.monotonic()


def new_database(dsn: str) -> str:
    """A new empty database on the cluster of ``dsn``; its DSN."""
    import psycopg

    name = f"nf_test_{os.getpid()}_{next(_names)}"
    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute(f"CREATE DATABASE {name}")
    return dsn.replace("postgresql:///postgres?", f"postgresql:///{name}?")
