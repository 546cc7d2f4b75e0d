#!/usr/bin/env python3
# usage: scripts/compare-schemas.py [--verbose] [--keep] [POSTGRES_URL]   (default: $TROUPE_TEST_DATABASE)
"""Check that migrations/postgres/ builds the same logical schema as migrations/sqlite/.

Applies the SQLite migrations to a temporary database (python's sqlite3, foreign keys on) and
the PostgreSQL ones, each with `psql -v ON_ERROR_STOP=1 -1 -f FILE`, to a fresh schema of the
given database (reached through search_path, as the store's tests do; dropped at the end unless
--keep). Then compares tables, columns (order, type, NOT NULL, default), primary keys, unique
constraints, foreign keys, CHECK counts, indexes (name, table, uniqueness, partial, key columns
or expressions), views and triggers, and runs the same good and bad rows against both databases.
Exits 1 when anything differs beyond the KNOWN list below. Developer aid: stdlib + psql only.
Start a server with: scripts/pg-test-cluster.sh start /tmp/pg
"""

import os
import re
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MIGRATIONS = ROOT / "crates" / "store" / "migrations"
SEP = "\x1f"

# Differences that are deliberate; printed, but they do not fail the comparison.
KNOWN = {
    # SQLite lets a TEXT PRIMARY KEY hold NULL (a legacy quirk); PostgreSQL's PRIMARY KEY is NOT NULL.
    ("notnull", "model_roles", "role"): "SQLite TEXT PRIMARY KEY admits NULL; PostgreSQL does not",
    # Rowid aliases whose value is always another table's id: plain BIGINT PRIMARY KEY on PostgreSQL.
    ("identity", "queued_wakes", "thread_id"): "key is the thread's id, never generated",
    ("identity", "session_threads", "thread_id"): "key is the thread's id, never generated",
    ("identity", "blueprint_bindings", "thread_id"): "key is the thread's id, never generated",
}

TYPES = {"INTEGER": "bigint", "TEXT": "text", "REAL": "double precision", "BLOB": "bytea"}
FK_ACTIONS = {"a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"}


# ---------------------------------------------------------------- PostgreSQL side

class Pg:
    def __init__(self, url, schema):
        self.url = url
        self.env = dict(os.environ, PGOPTIONS=f"-c search_path={schema}")
        self.schema = schema

    def run(self, sql=None, file=None, check=True):
        args = ["psql", "-X", "-q", "-At", "-F", SEP, "-v", "ON_ERROR_STOP=1", "-d", self.url]
        if file:
            args += ["-1", "-f", str(file)]
        p = subprocess.run(args, input=sql, env=self.env, capture_output=True, text=True)
        if check and p.returncode != 0:
            sys.exit(f"psql failed ({file or sql[:60]!r}):\n{p.stderr}")
        return p

    def rows(self, sql):
        out = self.run(sql).stdout
        return [line.split(SEP) for line in out.splitlines() if line]


def pg_schema(pg):
    s = pg.schema
    rel = f"JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace " \
          f"WHERE n.nspname = '{s}' AND t.relname <> 'troupe_schema'"
    cols_of = lambda arr, relid: (  # noqa: E731
        f"(SELECT string_agg(a.attname, ',' ORDER BY k.o) FROM unnest({arr}) WITH ORDINALITY k(n, o) "
        f"JOIN pg_attribute a ON a.attrelid = {relid} AND a.attnum = k.n)")
    schema = {"tables": {}, "indexes": {}, "views": set(), "triggers": set()}
    for (table,) in pg.rows(f"SELECT table_name FROM information_schema.tables WHERE table_schema = '{s}' "
                            f"AND table_type = 'BASE TABLE' AND table_name <> 'troupe_schema'"):
        schema["tables"][table] = {"columns": [], "pk": None, "unique": set(), "fks": set(), "checks": []}
    for table, name, typ, nullable, default, ident in pg.rows(
            f"SELECT table_name, column_name, data_type, is_nullable, coalesce(column_default, ''), "
            f"is_identity FROM information_schema.columns WHERE table_schema = '{s}' "
            f"AND table_name <> 'troupe_schema' ORDER BY table_name, ordinal_position"):
        if table not in schema["tables"]:
            continue
        default = re.sub(r"::(text|bigint|integer|double precision)\b", "", default) or None
        schema["tables"][table]["columns"].append({
            "name": name, "type": typ, "notnull": nullable == "NO", "default": default,
            "identity": ident == "YES"})
    for table, kind, cols, ftable, fcols, deltype, updtype, deferrable, deferred, definition in pg.rows(
            f"SELECT t.relname, c.contype, {cols_of('c.conkey', 'c.conrelid')}, "
            f"coalesce(c.confrelid::regclass::text, ''), coalesce({cols_of('c.confkey', 'c.confrelid')}, ''), "
            f"c.confdeltype, c.confupdtype, c.condeferrable, c.condeferred, pg_get_constraintdef(c.oid) "
            f"FROM pg_constraint c {rel}"):
        t = schema["tables"][table]
        if kind == "p":
            t["pk"] = cols
        elif kind == "u":
            t["unique"].add(cols)
        elif kind == "f":
            t["fks"].add((cols, ftable.split(".")[-1], fcols, FK_ACTIONS[deltype], FK_ACTIONS[updtype],
                          deferrable == "t", deferred == "t"))
        elif kind == "c":
            t["checks"].append(definition)
    for name, table, unique, partial, nkeys, oid, pred in pg.rows(
            f"SELECT i.relname, t.relname, x.indisunique, x.indpred IS NOT NULL, x.indnkeyatts, x.indexrelid, "
            f"coalesce(pg_get_expr(x.indpred, x.indrelid, true), '') "
            f"FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid "
            f"JOIN pg_namespace n ON n.oid = t.relnamespace WHERE n.nspname = '{s}' "
            f"AND t.relname <> 'troupe_schema' AND NOT EXISTS (SELECT 1 FROM pg_constraint c "
            f"WHERE c.conindid = x.indexrelid AND c.contype IN ('p', 'u', 'x'))"):
        keys = [pg.rows(f"SELECT pg_get_indexdef({oid}, {k}, true)")[0][0] for k in range(1, int(nkeys) + 1)]
        schema["indexes"][name] = {"table": table, "unique": unique == "t", "partial": partial == "t",
                                   "keys": [norm(k) for k in keys], "where": pred}
    schema["views"] = {r[0] for r in pg.rows(
        f"SELECT table_name FROM information_schema.views WHERE table_schema = '{s}'")}
    schema["triggers"] = {r[0] for r in pg.rows(
        f"SELECT g.tgname FROM pg_trigger g JOIN pg_class t ON t.oid = g.tgrelid "
        f"JOIN pg_namespace n ON n.oid = t.relnamespace WHERE n.nspname = '{s}' AND NOT g.tgisinternal")}
    return schema


# ---------------------------------------------------------------- SQLite side

def strip_comments(sql):
    return re.sub(r"--[^\n]*", "", sql)


def split_top(text):
    """Split on commas outside parentheses."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]


def index_key_texts(sql):
    """The key expressions of CREATE INDEX ... ON t(<keys>) [WHERE ...]."""
    rest = strip_comments(sql).split("(", 1)[1]
    depth, end = 1, 0
    for end, ch in enumerate(rest):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            break
    return [k.strip() for k in split_top(rest[:end])]


def norm(expr):
    return re.sub(r"\s+", "", expr).lower()


def sqlite_schema(db):
    q = lambda sql: db.execute(sql).fetchall()  # noqa: E731
    schema = {"tables": {}, "indexes": {}, "views": set(), "triggers": set()}
    for table, sql in q("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"):
        info = q(f"PRAGMA table_info('{table}')")
        pk = [r for r in sorted(info, key=lambda r: r[5]) if r[5] > 0]
        rowid_alias = len(pk) == 1 and pk[0][2].upper() == "INTEGER"
        cols = [{"name": name, "type": TYPES.get(typ.upper(), typ), "default": dflt,
                 "notnull": bool(nn) or (rowid_alias and name == pk[0][1]),
                 "identity": rowid_alias and name == pk[0][1]}
                for _cid, name, typ, nn, dflt, _pk in info]
        unique = set()
        for _seq, iname, _u, origin, _partial in q(f"PRAGMA index_list('{table}')"):
            if origin == "u":
                unique.add(",".join(r[2] for r in q(f"PRAGMA index_info('{iname}')")))
        fks = {}
        for fid, _seq, ftable, frm, to, upd, dele, _match in q(f"PRAGMA foreign_key_list('{table}')"):
            fks.setdefault(fid, [ftable, [], [], dele, upd])
            fks[fid][1].append(frm)
            fks[fid][2].append(to)
        deferred = "DEFERRABLE" in strip_comments(sql).upper()
        schema["tables"][table] = {
            "columns": cols,
            "pk": ",".join(r[1] for r in pk) or None,
            "unique": unique,
            "fks": {(",".join(f), ft, ",".join(t), d, u, deferred, deferred) for ft, f, t, d, u in fks.values()},
            "checks": check_texts(sql),
        }
    for name, table, sql in q("SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"):
        (_seq, _n, unique, _origin, partial), = [r for r in q(f"PRAGMA index_list('{table}')") if r[1] == name]
        texts = index_key_texts(sql)
        keys = [norm(col if cid != -2 else texts[i])
                for i, (_seqno, cid, col, _desc, _coll, key) in enumerate(q(f"PRAGMA index_xinfo('{name}')")) if key]
        where = re.search(r"\bWHERE\b(.*)$", strip_comments(sql), re.S | re.I)
        schema["indexes"][name] = {"table": table, "unique": bool(unique), "partial": bool(partial),
                                   "keys": keys, "where": where.group(1).strip() if where else ""}
    schema["views"] = {r[0] for r in q("SELECT name FROM sqlite_master WHERE type = 'view'")}
    schema["triggers"] = {r[0] for r in q("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    return schema


def check_texts(sql):
    """The CHECK (...) expressions of a CREATE TABLE statement."""
    sql, out = strip_comments(sql), []
    for m in re.finditer(r"\bCHECK\s*\(", sql, re.I):
        depth, i = 1, m.end()
        while depth:
            depth += (sql[i] == "(") - (sql[i] == ")")
            i += 1
        out.append(" ".join(sql[m.end():i - 1].split()))
    return out


# ---------------------------------------------------------------- comparison

class Report:
    def __init__(self, verbose):
        self.failures, self.known, self.verbose = 0, 0, verbose

    def diff(self, key, message):
        if key in KNOWN:
            self.known += 1
            print(f"  known: {message} ({KNOWN[key]})")
        else:
            self.failures += 1
            print(f"  DIFF:  {message}")

    def section(self, title, ok_line):
        print(f"\n{title}")
        self._ok_line, self._before = ok_line, self.failures + self.known

    def end(self):
        if self.failures + self.known == self._before:
            print(f"  ok: {self._ok_line}")


def compare(lite, pg, r):
    lt, pt = lite["tables"], pg["tables"]
    r.section("tables", f"{len(lt)} tables on both")
    for t in sorted(set(lt) ^ set(pt)):
        r.diff(("table", t), f"table {t} only on {'SQLite' if t in lt else 'PostgreSQL'}")
    r.end()
    common = sorted(set(lt) & set(pt))

    r.section("columns (order, type, NOT NULL, default, generated id)",
              f"{sum(len(lt[t]['columns']) for t in common)} columns alike")
    for t in common:
        ln = [c["name"] for c in lt[t]["columns"]]
        pn = [c["name"] for c in pt[t]["columns"]]
        if ln != pn:
            r.diff(("columns", t), f"{t}: SQLite {ln} / PostgreSQL {pn}")
            continue
        for lc, pc in zip(lt[t]["columns"], pt[t]["columns"]):
            for attr in ("type", "notnull", "default", "identity"):
                if lc[attr] != pc[attr]:
                    r.diff((attr, t, lc["name"]),
                           f"{t}.{lc['name']} {attr}: SQLite {lc[attr]!r} / PostgreSQL {pc[attr]!r}")
    r.end()

    r.section("primary keys, UNIQUE constraints, foreign keys, CHECK constraints", "alike on every table")
    nchecks = 0
    for t in common:
        for attr in ("pk", "unique", "fks"):
            if lt[t][attr] != pt[t][attr]:
                r.diff((attr, t), f"{t} {attr}: SQLite {lt[t][attr]} / PostgreSQL {pt[t][attr]}")
        if len(lt[t]["checks"]) != len(pt[t]["checks"]):
            r.diff(("checks", t), f"{t}: {len(lt[t]['checks'])} CHECKs on SQLite, {len(pt[t]['checks'])} on PostgreSQL")
        nchecks += len(lt[t]["checks"])
        if r.verbose and lt[t]["checks"] + pt[t]["checks"]:
            print(f"    {t}:")
            print("".join(f"      SQLite      CHECK ({c})\n" for c in lt[t]["checks"]), end="")
            print("".join(f"      PostgreSQL  {c}\n" for c in pt[t]["checks"]), end="")
    r.end()
    print(f"  ({nchecks} CHECKs, {sum(len(lt[t]['fks']) for t in common)} foreign keys, "
          f"{sum(len(lt[t]['unique']) for t in common)} UNIQUE constraints)")

    li, pi = lite["indexes"], pg["indexes"]
    r.section("indexes (name, table, unique, partial, keys)", f"{len(li)} named indexes alike")
    for name in sorted(set(li) ^ set(pi)):
        r.diff(("index", name), f"index {name} only on {'SQLite' if name in li else 'PostgreSQL'}")
    for name in sorted(set(li) & set(pi)):
        for attr in ("table", "unique", "partial", "keys"):
            if li[name][attr] != pi[name][attr]:
                r.diff((attr, name), f"index {name} {attr}: SQLite {li[name][attr]} / PostgreSQL {pi[name][attr]}")
        if r.verbose and li[name]["where"]:
            print(f"    {name} WHERE {li[name]['where']}\n    {' ' * len(name)} WHERE {pi[name]['where']}")
    r.end()

    for kind in ("views", "triggers"):
        r.section(kind, f"{len(lite[kind])} on both")
        for name in sorted(lite[kind] ^ pg[kind]):
            r.diff((kind, name), f"{kind[:-1]} {name} only on {'SQLite' if name in lite[kind] else 'PostgreSQL'}")
        r.end()


# ---------------------------------------------------------------- behaviour: the same rows on both

SETUP = [
    "INSERT INTO threads (id, agent, workspace, created_at, updated_at) VALUES (1, 'a', 'w', 0, 0)",
    "INSERT INTO threads (id, agent, workspace, created_at, updated_at) VALUES (2, 'a', 'w', 0, 0)",
    "INSERT INTO runs (id, thread_id, generation, trigger_reason, status, owner_pid, owner_boot, started_at)"
    " VALUES (1, 1, 1, 't', 'running', 1, 'b', 0)",
    "INSERT INTO messages (id, thread_id, role, origin, created_at) VALUES (1, 1, 'user', 'o', 0)",
    "INSERT INTO notes (id, kind, title, body, version, created_at, updated_at) VALUES (1, 'blueprint', 't', 'b', 1, 0, 0)",
]
RUN = "INSERT INTO runs (thread_id, generation, trigger_reason, status, end_reason, owner_pid, owner_boot, started_at, ended_at)"
INBOX = "INSERT INTO inbox_items (thread_id, mode, priority, order_key, delivery_key, origin, body, created_at)"
BOT = "INSERT INTO bots (name, archived_at, created_at, updated_at)"
LOOP = "INSERT INTO blueprint_loops (note_id, thread_id, status, record, created_at, updated_at)"
GUARD = ("INSERT INTO loop_guards (thread_id, loop_ref, max_model_calls, no_progress_limit, spacing_ms,"
         " counted_since, created_at, ended_at)")
AGENDA = ("INSERT INTO agenda_items (thread_id, trigger_kind, trigger_spec, status, auto_done, payload,"
          " created_at, updated_at)")
TASK = ("INSERT INTO tasks (parent_thread_id, child_thread_id, agent, prompt, output_contract, role, status,"
        " delivery_key, created_at, updated_at)")
EFFECT = "INSERT INTO effects (thread_id, run_id, effect_key, tool, summary, outcome, started_at)"

# (what, rows that must be accepted, a row that must be refused or None, refusal kind)
CASES = [
    ("run ended without a reason", [], f"{RUN} VALUES (1, 2, 't', 'completed', NULL, 1, 'b', 0, 5)", "check"),
    ("run with an unknown status", [], f"{RUN} VALUES (1, 2, 't', 'bogus', 'x', 1, 'b', 0, 5)", "check"),
    ("run that ended properly", [f"{RUN} VALUES (1, 2, 't', 'completed', 'done', 1, 'b', 0, 5)"], None, None),
    ("run of a missing thread", [], f"{RUN} VALUES (99, 2, 't', 'running', NULL, 1, 'b', 0, NULL)", "foreign"),
    ("thread without an agent", [],
     "INSERT INTO threads (workspace, created_at, updated_at) VALUES ('w', 0, 0)", "notnull"),
    ("inbox priority 5", [], f"{INBOX} VALUES (1, 'task', 5, 1, NULL, 'o', 'b', 0)", "check"),
    ("inbox delivery key twice", [f"{INBOX} VALUES (1, 'task', 1, 1, 'k', 'o', 'b', 0)"],
     f"{INBOX} VALUES (1, 'task', 1, 2, 'k', 'o', 'b', 0)", "unique"),
    ("inbox items without keys", [f"{INBOX} VALUES (1, 'task', 1, 1, NULL, 'o', 'b', 0)",
                                  f"{INBOX} VALUES (1, 'task', 1, 2, NULL, 'o', 'b', 0)"], None, None),
    ("live bot names differing in case", [f"{BOT} VALUES ('Ann', NULL, 0, 0)"],
     f"{BOT} VALUES ('ann', NULL, 0, 0)", "unique"),
    ("an archived bot's name reused", [f"{BOT} VALUES ('Ann', 1, 0, 0)", f"{BOT} VALUES ('ann', NULL, 0, 0)"],
     None, None),
    ("model role not in the list", [],
     "INSERT INTO model_roles (role, endpoint, updated_at) VALUES ('bogus', 'e', 0)", "check"),
    ("blank note title", [],
     "INSERT INTO notes (kind, title, body, version, created_at, updated_at) VALUES ('note', '   ', 'b', 1, 0, 0)",
     "check"),
    ("note version 0", [],
     "INSERT INTO notes (kind, title, body, version, created_at, updated_at) VALUES ('note', 't', 'b', 0, 0, 0)",
     "check"),
    ("agenda flag 2", [], f"{AGENDA} VALUES (1, 'at', '{{}}', 'active', 2, 'p', 0, 0)", "check"),
    ("effect key twice in a thread", [f"{EFFECT} VALUES (1, 1, 'k', 't', 's', 'started', 0)"],
     f"{EFFECT} VALUES (1, 1, 'k', 't', 's', 'started', 0)", "unique"),
    ("a child thread in two tasks", [f"{TASK} VALUES (1, 2, 'a', 'p', '{{}}', 'task', 'queued', 'k1', 0, 0)"],
     f"{TASK} VALUES (1, 2, 'a', 'p', '{{}}', 'task', 'queued', 'k2', 0, 0)", "unique"),
    ("two active loops of a Blueprint", [f"{LOOP} VALUES (1, 1, 'armed', '{{}}', 0, 0)"],
     f"{LOOP} VALUES (1, 2, 'running', '{{}}', 0, 0)", "unique"),
    ("an ended loop beside an active one", [f"{LOOP} VALUES (1, 1, 'completed', '{{}}', 0, 0)",
                                           f"{LOOP} VALUES (1, 1, 'armed', '{{}}', 0, 0)"], None, None),
    ("two active guards on a thread", [f"{GUARD} VALUES (1, 'lightloop', 1, 1, 0, 0, 0, NULL)"],
     f"{GUARD} VALUES (1, 'lightloop', 1, 1, 0, 0, 0, NULL)", "unique"),
    ("guard with a negative budget", [], f"{GUARD} VALUES (1, 'lightloop', -1, 1, 0, 0, 0, NULL)", "check"),
    ("a kernel message projected twice", [
        "INSERT INTO sessions (id, kind, created_at, updated_at) VALUES (1, 'direct', 0, 0)",
        "INSERT INTO session_messages (session_id, author, body, thread_message_id, created_at)"
        " VALUES (1, 'bot', 'b', 1, 0)"],
     "INSERT INTO session_messages (session_id, author, body, thread_message_id, created_at)"
     " VALUES (1, 'bot', 'b', 1, 0)", "unique"),
    ("message parts go with their message", [
        "INSERT INTO message_parts (message_id, seq, kind) VALUES (1, 0, 'text')",
        "DELETE FROM messages WHERE id = 1"], None, None),
]
SQLITE_ERRORS = {"check": "CHECK constraint failed", "unique": "UNIQUE constraint failed",
                 "foreign": "FOREIGN KEY constraint failed", "notnull": "NOT NULL constraint failed"}
PG_ERRORS = {"check": "violates check constraint", "unique": "duplicate key value violates unique constraint",
             "foreign": "violates foreign key constraint", "notnull": "violates not-null constraint"}


def sqlite_case(db, good, bad):
    db.execute("SAVEPOINT c")
    try:
        for sql in SETUP + good:
            db.execute(sql)
        leftover = db.execute("SELECT count(*) FROM message_parts").fetchone()[0]
        if bad is None:
            return "accepted", leftover
        try:
            db.execute(bad)
            return "accepted", leftover
        except sqlite3.IntegrityError as e:
            kind = next((k for k, m in SQLITE_ERRORS.items() if m in str(e)), str(e))
            return kind, leftover
    except sqlite3.Error as e:
        return f"setup failed: {e}", None
    finally:
        db.execute("ROLLBACK TO c")
        db.execute("RELEASE c")


def pg_case(pg, good, bad):
    script = ["BEGIN;"] + [s + ";" for s in SETUP + good]
    script += ["SELECT 'leftover', count(*) FROM message_parts;"]
    if bad:
        script.append(bad + ";")
    script.append("ROLLBACK;")
    p = pg.run("\n".join(script), check=False)
    leftover = next((int(line.split(SEP)[1]) for line in p.stdout.splitlines() if line.startswith("leftover")), None)
    if leftover is None:
        return f"setup failed: {p.stderr.strip()}", None
    if p.returncode == 0:
        return "accepted", leftover
    return next((k for k, m in PG_ERRORS.items() if m in p.stderr), p.stderr.strip()), leftover


def behaviour(db, pg, r):
    r.section("the same rows on both (must be accepted / refused alike)", f"{len(CASES)} cases alike")
    db.isolation_level = None
    for what, good, bad, expect in CASES:
        want = expect or "accepted"
        lite, plite = sqlite_case(db, good, bad)
        post, ppost = pg_case(pg, good, bad)
        if lite != want or post != want or plite != ppost:
            r.diff(("case", what), f"{what}: expected {want}; SQLite {lite}, PostgreSQL {post}"
                   + (f"; message_parts left {plite} / {ppost}" if plite != ppost else ""))
        elif r.verbose:
            print(f"    {what}: {want} on both")
    r.end()


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    verbose, keep = "--verbose" in sys.argv, "--keep" in sys.argv
    url = args[0] if args else os.environ.get("TROUPE_TEST_DATABASE")
    if not url:
        sys.exit(open(__file__).read().splitlines()[1].lstrip("# "))
    schema = f"compare_schemas_{os.getpid()}"
    admin = Pg(url, "public")
    admin.run(f"CREATE SCHEMA {schema}")
    pg = Pg(url, schema)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            db = sqlite3.connect(Path(tmp) / "schema.db")
            db.execute("PRAGMA foreign_keys = ON")
            lite_files = sorted((MIGRATIONS / "sqlite").glob("*.sql"))
            pg_files = sorted((MIGRATIONS / "postgres").glob("*.sql"))
            print(f"SQLite {sqlite3.sqlite_version}: {len(lite_files)} migrations; "
                  f"PostgreSQL {pg.rows('SHOW server_version')[0][0]}: {len(pg_files)} migrations "
                  f"(schema {schema})")
            r = Report(verbose)
            r.section("migration files", "same names in both directories")
            if [f.name for f in lite_files] != [f.name for f in pg_files]:
                r.diff(("files",), f"SQLite {[f.name for f in lite_files]} / PostgreSQL {[f.name for f in pg_files]}")
            r.end()
            for f in lite_files:
                db.executescript(f.read_text())
            for f in pg_files:
                pg.run(file=f)
            compare(sqlite_schema(db), pg_schema(pg), r)
            behaviour(db, pg, r)
            db.close()
    finally:
        if not keep:
            admin.run(f"DROP SCHEMA {schema} CASCADE")
    print(f"\n{r.failures} differences, {r.known} known differences")
    sys.exit(1 if r.failures else 0)


if __name__ == "__main__":
    main()
