"""A small repository in six languages for the repo map tests.

Each language has a "library" file that defines things and one or two files that use them,
so the expected ranking is known: definers above users. Around them sit the cases a real
tree has: ignored files, unknown extensions, a binary file with a source extension, a file
with a syntax error, and a nested .gitignore that re-includes a file.
"""

from __future__ import annotations

from pathlib import Path

SOURCES: dict[str, str] = {
    # --- Python --------------------------------------------------------------------------
    "app/models.py": '''\
"""Users and how to make them."""


class User:
    def __init__(self, name: str) -> None:
        self.name = name

    def full_name(self) -> str:
        return self.name.title()


def make_user(name: str) -> User:
    return User(name)
''',
    "app/service.py": """\
from app.models import User, make_user


class UserService:
    def register_user(self, name: str) -> User:
        user = make_user(name)
        return user

    def describe_user(self, user: User) -> str:
        return user.full_name()
""",
    "app/cli.py": """\
from app.service import UserService


def main() -> None:
    service = UserService()
    print(service.describe_user(service.register_user("ada")))
""",
    # --- JavaScript ----------------------------------------------------------------------
    "web/api.js": """\
export class ApiClient {
  constructor(base) { this.base = base; }
  request(path) { return fetch(this.base + path); }
}

export function fetchUsers(client) {
  return client.request('/users');
}
""",
    "web/app.js": """\
import { ApiClient, fetchUsers } from './api.js';

const client = new ApiClient('/api');
fetchUsers(client).then((users) => console.log(users));
""",
    # --- TypeScript ----------------------------------------------------------------------
    "web/types.ts": """\
export interface UserRecord {
  id: number;
  name: string;
}

export type UserId = number;
""",
    "web/store.ts": """\
import { UserRecord } from './types';

export class UserStore {
  private users: UserRecord[] = [];
  addRecord(user: UserRecord): void { this.users.push(user); }
}

export function createStore(): UserStore {
  return new UserStore();
}
""",
    "web/view.tsx": """\
import { createStore, UserStore } from './store';

export function UserList(props: { title: string }) {
  const store: UserStore = createStore();
  return <ul>{props.title}</ul>;
}
""",
    # --- Go ------------------------------------------------------------------------------
    "server/server.go": """\
package server

type HttpServer struct {
\tAddr string
}

func NewHttpServer(addr string) *HttpServer {
\treturn &HttpServer{Addr: addr}
}

func (s *HttpServer) ListenAndServe() error {
\treturn nil
}
""",
    "server/main.go": """\
package server

func main() {
\ts := NewHttpServer(":8080")
\ts.ListenAndServe()
}
""",
    # --- Rust ----------------------------------------------------------------------------
    "engine/src/lib.rs": """\
pub struct Engine {
    speed: u32,
}

impl Engine {
    pub fn new(speed: u32) -> Self {
        Engine { speed }
    }

    pub fn run_engine(&self) -> u32 {
        self.speed
    }
}

pub fn start_engine() -> Engine {
    Engine::new(3)
}
""",
    "engine/src/main.rs": """\
fn main() {
    let engine = start_engine();
    engine.run_engine();
}
""",
    # --- Java ----------------------------------------------------------------------------
    "java/src/Repository.java": """\
public class Repository {
    public String loadValue(String key) {
        return key;
    }
}
""",
    "java/src/Main.java": """\
public class Main {
    public static void main(String[] args) {
        Repository repo = new Repository();
        repo.loadValue("k");
    }
}
""",
    # --- the awkward cases ---------------------------------------------------------------
    "broken/half.py": """\
def still_found(x):
    return x


def broken(:
    pass
""",
    "README.md": "# Fixture\n\ndef not_code(): pass\n",
    "config.toml": "[tool]\nname = 'fixture'\n",
    ".gitignore": "build/\n*.gen.py\n",
    "build/generated.py": "def ignored_build_output():\n    pass\n",
    "app/schema.gen.py": "def ignored_generated():\n    pass\n",
    "vendor/.gitignore": "*.py\n!keep.py\n",
    "vendor/drop.py": "def dropped_by_nested_ignore():\n    pass\n",
    "vendor/keep.py": "def kept_by_negation():\n    pass\n",
}

BINARY_FILE = "broken/blob.py"
"""A file with a source extension whose content is binary: skipped, not parsed."""

DEFINERS = {
    "app/models.py",
    "app/service.py",
    "web/api.js",
    "web/types.ts",
    "web/store.ts",
    "server/server.go",
    "engine/src/lib.rs",
    "java/src/Repository.java",
}
"""Files other files use: the ranking must put them above the files that only use."""

USERS_ONLY = {"app/cli.py", "web/app.js", "server/main.go", "engine/src/main.rs"}

SOURCE_FILES = 17
"""Files in a language we parse after .gitignore (the binary one included)."""


def write_repo(root: Path) -> Path:
    """Write the fixture repository under ``root`` and return it."""
    for rel, text in SOURCES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / BINARY_FILE).write_bytes(b"\x00\x01\x02binary\x00" * 10)
    return root
