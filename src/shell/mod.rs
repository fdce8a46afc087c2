//! Shell command lines as text: the lexer that finds simple commands and operators, and
//! word splitting for `shell: none`. A leaf: the manifest validates with it, the run
//! refuses and spawns with it.

pub mod lexer;
pub mod words;
