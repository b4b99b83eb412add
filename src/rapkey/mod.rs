//! rapkey, a domain over text with a Damm check character (docs/formats.md §3–4): the SQL
//! functions (`functions`), the domain's CHECK (`domain_check`), and the wording of rapkey
//! errors both use (`messages`). The grammar and the check are `idgen_core::rapkey`.

mod domain_check;
mod functions;
mod messages;
