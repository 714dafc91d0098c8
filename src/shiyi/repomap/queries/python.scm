; shiyi additions to tree-sitter-python's tags.scm, which sees only calls as references.
; Base classes, annotations, decorators and imports tie Python files together as well.

(class_definition
  superclasses: (argument_list (identifier) @name)) @reference.class

(class_definition
  superclasses: (argument_list (attribute attribute: (identifier) @name))) @reference.class

(type (identifier) @name) @reference.type

(generic_type (identifier) @name) @reference.type

(decorator (identifier) @name) @reference.call

(decorator (attribute attribute: (identifier) @name)) @reference.call

(decorator (call function: (identifier) @name)) @reference.call

(import_from_statement
  name: (dotted_name (identifier) @name)) @reference.import

(import_from_statement
  name: (aliased_import name: (dotted_name (identifier) @name))) @reference.import
