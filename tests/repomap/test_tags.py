"""Tags of single files: definitions with their signatures, and references, per language."""

from __future__ import annotations

import pytest

from shiyi.repomap import LANGUAGES, language_for
from shiyi.repomap.languages import grammar, shipped_tags
from shiyi.repomap.tags import extract_tags
from tests.support.repomap_repo import SOURCES


def tags_of(rel: str) -> tuple[list[tuple[str, str, int, str]], dict[str, int]]:
    language = language_for(rel)
    assert language is not None
    tags = extract_tags(SOURCES[rel].encode(), language)
    rows = [(d.name, d.kind, d.line, d.signature) for d in tags.definitions]
    return rows, dict(tags.references)


@pytest.mark.parametrize("package", sorted({s.package for s in LANGUAGES.values()}))
def test_every_grammar_package_ships_a_tags_query(package: str) -> None:
    # If a release drops queries/tags.scm, shiyi needs its own queries/<lang>.scm instead.
    assert "@name" in shipped_tags(package)


@pytest.mark.parametrize("name", sorted(LANGUAGES))
def test_every_query_compiles_against_its_grammar(name: str) -> None:
    assert grammar(name).query.pattern_count > 0


def test_python_definitions_signatures_and_references() -> None:
    rows, refs = tags_of("app/service.py")
    assert rows == [
        ("UserService", "class", 4, "class UserService:"),
        ("register_user", "function", 5, "def register_user(self, name: str) -> User:"),
        ("describe_user", "function", 9, "def describe_user(self, user: User) -> str:"),
    ]
    # Imports and annotations count as uses, not only calls.
    assert refs["User"] == 3 and refs["make_user"] == 2
    assert refs["full_name"] == 1


def test_javascript() -> None:
    rows, refs = tags_of("web/api.js")
    assert rows == [
        ("ApiClient", "class", 1, "export class ApiClient"),
        ("request", "method", 3, "request(path)"),
        ("fetchUsers", "function", 6, "export function fetchUsers(client)"),
    ]
    _, refs = tags_of("web/app.js")
    assert refs["ApiClient"] == 2 and refs["fetchUsers"] == 2  # imported and used


def test_typescript_joins_the_javascript_query() -> None:
    rows, refs = tags_of("web/store.ts")
    assert rows == [
        ("UserStore", "class", 3, "export class UserStore"),
        ("addRecord", "method", 5, "addRecord(user: UserRecord): void"),
        ("createStore", "function", 8, "export function createStore(): UserStore"),
    ]
    assert refs["UserRecord"] == 3
    rows, _ = tags_of("web/types.ts")
    assert [(name, kind) for name, kind, _, _ in rows] == [
        ("UserRecord", "interface"),
        ("UserId", "type"),
    ]


def test_tsx() -> None:
    rows, refs = tags_of("web/view.tsx")
    assert rows == [
        ("UserList", "function", 3, "export function UserList(props: { title: string })")
    ]
    assert refs["createStore"] == 2 and refs["UserStore"] == 2


def test_go() -> None:
    rows, _ = tags_of("server/server.go")
    assert rows == [
        ("HttpServer", "type", 3, "type HttpServer struct"),
        ("NewHttpServer", "function", 7, "func NewHttpServer(addr string) *HttpServer"),
        ("ListenAndServe", "method", 11, "func (s *HttpServer) ListenAndServe() error"),
    ]
    _, refs = tags_of("server/main.go")
    assert refs == {"NewHttpServer": 1, "ListenAndServe": 1}


def test_rust() -> None:
    rows, refs = tags_of("engine/src/lib.rs")
    assert rows == [
        ("Engine", "class", 1, "pub struct Engine"),
        ("new", "method", 6, "pub fn new(speed: u32) -> Self"),
        ("run_engine", "method", 10, "pub fn run_engine(&self) -> u32"),
        ("start_engine", "function", 15, "pub fn start_engine() -> Engine"),
    ]
    assert refs["new"] == 1  # `Engine::new(3)`: the shipped query misses path calls


def test_java() -> None:
    rows, _ = tags_of("java/src/Repository.java")
    assert rows == [
        ("Repository", "class", 1, "public class Repository"),
        ("loadValue", "method", 2, "public String loadValue(String key)"),
    ]
    _, refs = tags_of("java/src/Main.java")
    assert refs["Repository"] == 2 and refs["loadValue"] == 1


def test_syntax_errors_keep_the_tags_around_them() -> None:
    rows, _ = tags_of("broken/half.py")
    assert rows[0] == ("still_found", "function", 1, "def still_found(x):")


def test_multi_line_signatures_are_joined() -> None:
    source = b"def connect(\n    host: str,\n    port: int = 80,\n) -> None:\n    pass\n"
    (definition,) = extract_tags(source, "python").definitions
    assert definition.signature == "def connect(host: str, port: int = 80) -> None:"
    assert (definition.line, definition.end_line) == (1, 5)


def test_builtin_names_and_methods_are_not_references() -> None:
    source = b"def f(d, xs):\n    xs.append(len(d.get('k')))\n    return shape.area() + area(1)\n"
    refs = extract_tags(source, "python").references
    # len() is the builtin and .get/.append are dict/list methods; area is ours either way.
    assert dict(refs) == {"area": 2}


def test_a_definition_name_is_not_its_own_reference() -> None:
    source = b"pub struct Point { x: i32 }\nfn origin() -> Point { Point { x: 0 } }\n"
    refs = extract_tags(source, "rust").references
    assert refs["Point"] == 2  # the return type and the literal, not the struct's own name
