"""The service's commands, registered on the main ``noisyfeedback`` CLI: ``serve``, ``keys create``,
``export-log``. FastAPI and uvicorn are imported only when ``serve`` runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

__all__ = ["register"]

keys_app = typer.Typer(help="API keys of a service database.", no_args_is_help=True)


@keys_app.command("create")
def keys_create(
    db: Annotated[str, typer.Option("--db", help="The service's database (SQLite file or postgresql:// DSN).")],
    role: Annotated[str, typer.Option("--role", help="rank (rank/reward) or admin (every route).")] = "rank",
) -> None:
    """Create an API key; the key is printed once, as the last line."""
    from .auth import ROLES, create_key

    if role not in ROLES:
        raise typer.BadParameter(f"--role must be one of {', '.join(ROLES)}; got {role!r}.")
    key = create_key(db, role)
    typer.echo(f"Created a {role} key for {db}; it is stored hashed and shown only now:")
    typer.echo(key)


def serve(
    db: Annotated[str, typer.Option("--db", help="SQLite file of the log (created if absent) or a "
                                                "postgresql:// DSN.")],
    model: Annotated[Optional[Path], typer.Option("--model", help="A saved learner (.npz) to deploy.")] = None,
    learner: Annotated[Optional[str], typer.Option("--learner", help="A registered bandit learner.")] = None,
    n_classes: Annotated[Optional[int], typer.Option("--n-classes", help="Number of actions K.")] = None,
    n_features: Annotated[Optional[int], typer.Option("--n-features", help="Context dimension d.")] = None,
    param: Annotated[Optional[list[str]], typer.Option("--param", help="Learner parameter key=value.")] = None,
    rho0: Annotated[float, typer.Option("--rho0", help="Flip rate P(click seen | no click).")] = 0.0,
    rho1: Annotated[float, typer.Option("--rho1", help="Flip rate P(no click seen | click).")] = 0.0,
    mode: Annotated[str, typer.Option("--mode", help="online or apprentice.")] = "online",
    host: Annotated[str, typer.Option("--host")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port")] = 8000,
    snapshot_every: Annotated[int, typer.Option("--snapshot-every", help="Rewards between snapshots.")] = 100_000,
    sync: Annotated[str, typer.Option("--sync", help="SQLite synchronous: FULL (power-safe) or NORMAL "
                                                     "(crash-safe).")] = "FULL",
    max_body: Annotated[int, typer.Option("--max-body", help="Request body limit in bytes.")] = 1 << 20,
    snapshot_dir: Annotated[Optional[Path], typer.Option("--snapshot-dir", help="Folder of the model snapshots "
                                                         "(default: DB.snapshots next to a SQLite file).")] = None,
) -> None:
    """Serve a learner over HTTP: POST /rank, POST /reward, GET /metrics, ... (see docs/deploy.md)."""
    import uvicorn

    from ..registry import parse_params
    from .app import create_app
    from .engine import ServiceConfig

    if mode not in ("online", "apprentice"):
        raise typer.BadParameter(f"--mode must be online or apprentice; got {mode!r}.")
    cfg = ServiceConfig(db=db, model=model, learner=learner, n_classes=n_classes, n_features=n_features,
                        params=parse_params(param), rho0=rho0, rho1=rho1, mode=mode,
                        snapshot_every=snapshot_every, synchronous=sync, max_body=max_body,
                        snapshot_dir=snapshot_dir)
    try:
        app = create_app(cfg)
    except ValueError as exc:
        typer.echo(f"Error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"noisyfeedback service on http://{host}:{port} (log {db})", err=True)
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False, workers=1)


def export_log(
    db: Annotated[str, typer.Option("--db", help="The service's database (SQLite file or postgresql:// DSN).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output file: .parquet, or .vw for VW cb lines.")],
) -> None:
    """Export the log: Parquet (every event and its reward) or VW cb (rewarded events)."""
    from .export import export_parquet, export_vw

    path = export_vw(db, out) if out.suffix == ".vw" else export_parquet(db, out)
    typer.echo(str(path))


def register(app: typer.Typer) -> None:
    """Add ``serve``, ``keys`` and ``export-log`` to the main CLI."""
    app.command("serve")(serve)
    app.command("export-log")(export_log)
    app.add_typer(keys_app, name="keys")
