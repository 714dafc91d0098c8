; shiyi additions to tree-sitter-typescript's tags.scm: type aliases and enums are
; definitions; `extends` and every use of a type (arrays, generics, unions...) are
; references. A definition's own name is not counted as a reference.

(type_alias_declaration name: (type_identifier) @name) @definition.type

(enum_declaration name: (identifier) @name) @definition.enum

(extends_clause value: (identifier) @name) @reference.class

(type_identifier) @name @reference.type
