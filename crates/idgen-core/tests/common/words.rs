//! The form of the `words` of the shared vectors (registry_errors.json's `words_format`): each
//! entry's templates name only the placeholders it declares, in a form `forms` defines, with no
//! other braces; every face is present (a template or null); every declared placeholder is used.

use super::json::Json;
use std::collections::BTreeSet;

/// The placeholders of a template, as (name, form); panics on a brace that opens none.
pub fn spots(template: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find(['{', '}']) {
        assert_eq!(&rest[open..=open], "{", "a lone '}}' in {template:?}");
        let close = open + rest[open..].find('}').expect("an unclosed '{'");
        let inner = &rest[open + 1..close];
        let (name, form) = inner.split_once(':').unwrap_or((inner, ""));
        assert!(
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "{template:?}: {{{inner}}}"
        );
        out.push((name.to_string(), form.to_string()));
        rest = &rest[close + 1..];
    }
    out
}

/// Checks `doc`'s `words` for the faces given; `forms`: the forms a template may use. Returns
/// the entries' names.
pub fn check(doc: &Json, faces: &[&str], forms: &BTreeSet<String>) -> Vec<String> {
    let mut names = Vec::new();
    for entry in doc.arr("words") {
        let name = entry.str("name").to_string();
        assert!(!names.contains(&name), "{name} twice");
        let Some(Json::Obj(declared)) = entry.get("placeholders") else {
            panic!("{name}: no placeholders")
        };
        let mut used = BTreeSet::new();
        let mut templates = 0;
        for face in faces.iter().chain(&["rust_async"]) {
            let template = match entry.get(face) {
                Some(Json::Str(t)) => t,
                Some(Json::Null) => continue,
                None if *face == "rust_async" => continue,
                other => panic!("{name}: face {face} is {other:?}"),
            };
            templates += 1;
            for (spot, form) in spots(template) {
                assert!(
                    declared.contains_key(&spot),
                    "{name} ({face}): {{{spot}}} is not declared"
                );
                assert!(
                    form.is_empty() || forms.contains(&form),
                    "{name} ({face}): no form {form}"
                );
                used.insert(spot);
            }
        }
        assert!(templates > 0, "{name}: no face has it");
        for spot in declared.keys() {
            assert!(
                used.contains(spot),
                "{name}: {spot} is declared but no template uses it"
            );
        }
        names.push(name);
    }
    names
}
