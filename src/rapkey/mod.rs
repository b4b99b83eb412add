//! rapkey, a domain over text with a Damm check character (docs/formats.md §3–4): the SQL
//! functions (`functions`) and the domain's CHECK (`domain_check`). The grammar, the check and
//! the words of rapkey errors are `idgen_core::rapkey`.

mod domain_check;
mod functions;
