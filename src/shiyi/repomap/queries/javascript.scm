; shiyi additions to tree-sitter-javascript's tags.scm: `class A extends B` refers to B.

(class_heritage (identifier) @name) @reference.class

(class_heritage (member_expression property: (property_identifier) @name)) @reference.class
