; shiyi additions shared by JavaScript and TypeScript: an imported name is a reference.

(import_specifier name: (identifier) @name) @reference.import
