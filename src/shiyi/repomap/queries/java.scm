; shiyi additions to tree-sitter-java's tags.scm: enums and records are definitions; every
; use of a type (fields, parameters, generics) and `Type.staticCall()` are references.

(enum_declaration name: (identifier) @name) @definition.enum

(record_declaration name: (identifier) @name) @definition.class

(type_identifier) @name @reference.type

(method_invocation object: (identifier) @name) @reference.type
