"""The service's commands, registered on the main ``noisyfeedback`` CLI: ``serve``, ``keys create``,
``keys list``, ``keys revoke``, ``export-log``. FastAPI and uvicorn are imported only when ``serve`` runs.

Every refusal (a bad option value, a missing or foreign database, an existing output file) is one line
``Error: ...`` on stderr and exit status 2, never a traceback; a command that fails on a new database
path leaves no file behind.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

__all__ = ["register"]

keys_app = typer.Typer(help="API keys of a service database.", no_args_is_help=True)

DB_HELP = "The service's database (SQLite file or postgresql:// DSN)."


#: the flag of each ServiceConfig field whose flag is not its name with dashes
FLAGS = {"interactions": "--interaction", "synchronous": "--sync", "params": "--param"}


def flag(option: str) -> str:
    """The command line's word for a configuration field: ``n_classes`` -> ``--n-classes``,
    ``params['gamma']`` -> ``--param gamma``; a field without a flag keeps its name."""
    if option.startswith("params[") and option.endswith("]"):
        return f"--param {option[7:-1].strip(chr(39))}"
    if option == "busy_timeout":
        return option
    if option.startswith("model's "):
        return "--" + option
    return FLAGS.get(option, "--" + option.replace("_", "-"))


def _message(exc: Exception) -> str:
    from .errors import ConfigError

    return exc.render(flag) if isinstance(exc, ConfigError) else str(exc)


def _fail(message: str) -> typer.Exit:
    typer.echo(f"Error: {message}", err=True)
    return typer.Exit(2)


def _existing_storage(db: str):
    from .stores import open_storage

    try:
        return open_storage(db, create=False)
    except (ValueError, OSError, sqlite3.Error) as exc:
        raise _fail(str(exc)) from None


@keys_app.command("create")
def keys_create(
    db: Annotated[str, typer.Option("--db", help=DB_HELP + " Created if absent (its folder must exist).")],
    role: Annotated[str, typer.Option("--role", help="rank (rank/reward) or admin (every route).")] = "rank",
) -> None:
    """Create an API key; the key is printed once, as the last line."""
    from .auth import ROLES, create_key
    from .stores import open_storage

    if role not in ROLES:
        raise typer.BadParameter(f"--role must be one of {', '.join(ROLES)}; got {role!r}.")
    fresh = not Path(db).exists()
    try:
        storage = open_storage(db)
        key = create_key(db, role, storage=storage)
        storage.close()
    except (ValueError, OSError, sqlite3.Error) as exc:
        if fresh:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db}{suffix}").unlink(missing_ok=True)
        raise _fail(str(exc)) from None
    typer.echo(f"Created a {role} key for {db}; it is stored hashed and shown only now:")
    typer.echo(key)


def _when(t: float | None) -> str:
    return "never" if t is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


@keys_app.command("list")
def keys_list(db: Annotated[str, typer.Option("--db", help=DB_HELP)]) -> None:
    """List the keys: id, role, created, last used (the keys themselves are never stored)."""
    storage = _existing_storage(db)
    rows = storage.list_keys()
    typer.echo(f"{'id':<14}{'role':<7}{'created':<21}last used")
    for key_id, role, created, last in rows:
        typer.echo(f"{key_id:<14}{role:<7}{_when(created):<21}{_when(last)}")


@keys_app.command("revoke")
def keys_revoke(
    key: Annotated[str, typer.Argument(help="The key (nf_...) or its id from `keys list`.")],
    db: Annotated[str, typer.Option("--db", help=DB_HELP)],
) -> None:
    """Revoke a key: a running service refuses it (401) from the next request on."""
    from .auth import hash_key

    storage = _existing_storage(db)
    ident = hash_key(key) if key.startswith("nf_") else key
    try:
        n = storage.revoke_key(ident)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    if n == 0:
        raise _fail(f"no key {key[:16]!r}{'...' if len(key) > 16 else ''} in {db}.")
    typer.echo("Revoked the key; requests with it get 401 from now on.")


def serve(
    db: Annotated[str, typer.Option("--db", help="SQLite file of the log (created if absent; its folder must "
                                                "exist) or a postgresql:// DSN.")],
    model: Annotated[Optional[Path], typer.Option("--model", help="A saved learner (.npz) to deploy; with "
                                                         "--action-features, one 'noisyfeedback train' wrote.")] = None,
    learner: Annotated[Optional[str], typer.Option("--learner", help="A registered bandit learner.")] = None,
    n_classes: Annotated[Optional[int], typer.Option("--n-classes", help="Number of actions K.")] = None,
    n_features: Annotated[Optional[int], typer.Option("--n-features", help="Context dimension d.")] = None,
    param: Annotated[Optional[list[str]], typer.Option("--param", help="Learner parameter key=value.")] = None,
    rho0: Annotated[Optional[str], typer.Option("--rho0", help="Flip rate P(click seen | no click) "
                                                            "(default 0), or one per action: 0.3,0.3,0,0.")] = None,
    rho1: Annotated[Optional[str], typer.Option("--rho1", help="Flip rate P(no click seen | click) "
                                                            "(default 0), or one per action: 0,0,0.5,0.5.")] = None,
    mode: Annotated[str, typer.Option("--mode", help="online or apprentice.")] = "online",
    host: Annotated[str, typer.Option("--host")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535)] = 8000,
    snapshot_every: Annotated[int, typer.Option("--snapshot-every", help="Rewards between snapshots "
                                                                        "(0: only on POST /snapshot).")] = 100_000,
    sync: Annotated[str, typer.Option("--sync", help="SQLite synchronous: FULL (power-safe) or NORMAL "
                                                     "(crash-safe).")] = "FULL",
    max_body: Annotated[int, typer.Option("--max-body", help="Request body limit in bytes.")] = 1 << 20,
    max_header: Annotated[int, typer.Option("--max-header", help="Request line and headers limit in "
                                                                 "bytes.")] = 16 << 10,
    snapshot_dir: Annotated[Optional[Path], typer.Option("--snapshot-dir", help="Folder of the model snapshots "
                                                         "(default: DB.snapshots next to a SQLite file).")] = None,
    action_features: Annotated[bool, typer.Option("--action-features", help="Rank actions described by features "
                                                  "(context_features, actions; multi-slot, Personalizer routes) "
                                                  "with a catalogue learner, e.g. --learner SquareCB.")] = False,
    bits: Annotated[Optional[int], typer.Option("--bits", help="--action-features: hash into 2^BITS weights "
                                                               "(default 18).")] = None,
    interaction: Annotated[Optional[list[str]], typer.Option("--interaction", help="--action-features: VW's -q "
                           "pair of namespace first letters (context, action), ':' any; repeatable (default: "
                           "every pair).")] = None,
    max_actions: Annotated[int, typer.Option("--max-actions", help="--action-features: actions a request may "
                                                                   "list.")] = 50,
    replica: Annotated[Optional[str], typer.Option("--replica", help="This process's name among several "
                                                   "replicas of one PostgreSQL log (each learns every reward "
                                                   "of the log).")] = None,
    poll_interval: Annotated[float, typer.Option("--poll-interval", help="Replicas: seconds between reads of "
                                                 "the rewards other replicas logged, when idle.")] = 0.05,
    header_timeout: Annotated[float, typer.Option("--header-timeout", min=0.1, max=3600, help="Seconds a request's "
                                                  "line and headers may take to arrive (408 and closed "
                                                  "beyond).")] = 10.0,
    db_retry: Annotated[float, typer.Option("--db-retry", help="PostgreSQL: seconds a request waits, retrying "
                                            "with backoff, for a database that cannot be reached (a restart, a "
                                            "failover) before it gets 503.")] = 2.0,
    commit_delay: Annotated[float, typer.Option("--commit-delay", help="Seconds the log writer waits, when other "
                                                "requests are in flight, for their writes to join one commit "
                                                "(group commit; 0: never).")] = 0.001,
) -> None:
    """Serve a learner over HTTP: POST /rank, POST /reward, GET /metrics, ... (see the README, Deploy)."""
    from .app import create_app
    from .config import ServiceConfig
    from .errors import ServiceError
    from .learner import parse_param_items, parse_rates
    from .server import run

    try:
        cfg = ServiceConfig(db=db, model=model, learner=learner, n_classes=n_classes, n_features=n_features,
                            params=parse_param_items(param), rho0=parse_rates(rho0, "--rho0"),
                            rho1=parse_rates(rho1, "--rho1"), mode=mode,
                            snapshot_every=snapshot_every, synchronous=sync, max_body=max_body,
                            max_header=max_header, snapshot_dir=snapshot_dir, action_features=action_features,
                            bits=bits, interactions=tuple(interaction) if interaction else None,
                            max_actions=max_actions, replica=replica, poll_interval=poll_interval,
                            db_retry=db_retry, commit_delay=commit_delay)
        cfg.check()
        app = create_app(cfg)
    except (ValueError, OSError, sqlite3.Error, ServiceError) as exc:
        raise _fail(_message(exc)) from None
    typer.echo(f"noisyfeedback service on http://{host}:{port} (log {db}"
               f"{f', replica {replica}' if replica else ''})", err=True)
    run(app, host, port, max_header, header_timeout)


def export_log(
    db: Annotated[str, typer.Option("--db", help=DB_HELP)],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output file: .parquet, .csv, or .vw (VW cb lines).")],
    force: Annotated[bool, typer.Option("--force", help="Replace an existing output file.")] = False,
    since: Annotated[Optional[str], typer.Option(
        "--since", help="First event exported (.parquet/.csv): an event sequence number or an ISO 8601 time "
                        "(UTC unless a zone is given).")] = None,
    until: Annotated[Optional[str], typer.Option(
        "--until", help="Last event exported (.parquet/.csv): a sequence number or an ISO 8601 time.")] = None,
) -> None:
    """Export the log: Parquet or CSV (every event and its reward, written in chunks) or VW cb (rewarded
    events)."""
    from .export import export_log as export

    try:
        path = export(db, out, force=force, since=since, until=until)
    except (ValueError, OSError, sqlite3.Error) as exc:
        raise _fail(str(exc)) from None
    typer.echo(str(path))


def register(app: typer.Typer) -> None:
    """Add ``serve``, ``keys`` and ``export-log`` to the main CLI."""
    app.command("serve")(serve)
    app.command("export-log")(export_log)
    app.add_typer(keys_app, name="keys")
