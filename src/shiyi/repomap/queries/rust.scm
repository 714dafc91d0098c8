; shiyi additions to tree-sitter-rust's tags.scm, which misses path calls (`Foo::new()`),
; type uses and imports. A definition's own name is not counted as a reference.

(call_expression
  function: (scoped_identifier name: (identifier) @name)) @reference.call

(generic_function
  function: (scoped_identifier name: (identifier) @name)) @reference.call

(scoped_identifier path: (identifier) @name) @reference.type

(type_identifier) @name @reference.type

(use_declaration argument: (scoped_identifier name: (identifier) @name)) @reference.import

(use_list (identifier) @name) @reference.import

(const_item name: (identifier) @name) @definition.constant

(static_item name: (identifier) @name) @definition.constant
