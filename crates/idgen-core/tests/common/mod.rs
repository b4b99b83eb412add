pub mod json;
#[allow(dead_code)]
pub mod words;
