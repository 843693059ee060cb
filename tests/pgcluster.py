"""A throwaway PostgreSQL cluster for the tests and benchmarks: Debian's ``postgresql`` binaries,
``initdb`` into a temporary folder, ``pg_ctl start`` on a free local port with its unix socket in
that folder, ``pg_ctl stop`` and the folder removed afterwards.

PostgreSQL refuses to run as root, so as root (CI) the cluster runs as the ``postgres`` user (or
``nobody``) through ``runuser``.  Clients log in over TCP with a password (scram-sha-256), the way
a team's app servers would, so the password-handling paths are the real ones.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

USER = "citecheck"


def bindir() -> Path | None:
    """Where initdb and pg_ctl are: $CITECHECK_PG_BIN, else the newest /usr/lib/postgresql/*/bin, else PATH."""
    if os.environ.get("CITECHECK_PG_BIN"):
        return Path(os.environ["CITECHECK_PG_BIN"])
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _runas() -> list[str]:
    if os.geteuid() != 0:
        return []
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return ["runuser", "-u", name, "--"]
        except KeyError:
            continue
    raise RuntimeError("running as root and there is no postgres or nobody user to run PostgreSQL as")


@dataclass
class Cluster:
    folder: Path
    port: int
    password: str
    prefix: list[str]
    bin: Path

    def url(self, database: str = "postgres", password: bool = True) -> str:
        secret = f":{self.password}" if password else ""
        return f"postgresql://{USER}{secret}@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        """A new empty database; returns its URL (with the password)."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def pg_ctl(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*self.prefix, str(self.bin / "pg_ctl"), "-D", str(self.folder / "data"), *args],
                              capture_output=True, text=True, timeout=120)

    def stop(self) -> None:
        self.pg_ctl("stop", "-m", "fast", "-w")
        shutil.rmtree(self.folder, ignore_errors=True)


def start(durable: bool = True) -> Cluster:
    """Start a cluster.  ``durable=False`` turns fsync off (tests kill clients, never the server);
    benchmarks keep the default durability so the figures mean something."""
    bin = bindir()
    if bin is None or not (bin / "initdb").exists():
        raise FileNotFoundError("PostgreSQL binaries not found: apt-get install postgresql, or set CITECHECK_PG_BIN")
    prefix = _runas()
    # as root the server runs as another user, who must be able to reach the folder: /tmp, not $TMPDIR
    folder = Path(tempfile.mkdtemp(prefix="citecheck-pg-", dir="/tmp" if prefix else None))
    password = uuid.uuid4().hex
    (folder / "pw").write_text(password + "\n")
    if prefix:
        owner = pwd.getpwnam(prefix[2])
        for path in (folder, folder / "pw"):
            os.chown(path, owner.pw_uid, owner.pw_gid)
    init = subprocess.run([*prefix, str(bin / "initdb"), "-D", str(folder / "data"), "-U", USER, "-E", "UTF8",
                           "--locale=C", f"--pwfile={folder / 'pw'}", "--auth-local=trust",
                           "--auth-host=scram-sha-256", "--no-sync"], capture_output=True, text=True, timeout=300)
    if init.returncode:
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"initdb failed: {init.stderr or init.stdout}")
    (folder / "pw").unlink()
    port = _free_port()
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c max_connections=100"
    if not durable:
        options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    cluster = Cluster(folder, port, password, prefix, bin)
    started = cluster.pg_ctl("start", "-w", "-t", "60", "-l", str(folder / "server.log"), "-o", options)
    if started.returncode:
        log = (folder / "server.log").read_text(errors="replace") if (folder / "server.log").exists() else ""
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"pg_ctl start failed: {started.stderr or started.stdout}\n{log}")
    return cluster
