//! Debian control-file syntax (deb822): blank-line separated stanzas of `Field: value`, with
//! continuation lines starting with a space. Sources files, Release and Packages use it.

/// The stanzas of `text`, each a list of (field, value) with continuation lines joined by
/// `\n`. Comment lines (`#`) are skipped.
pub fn stanzas(text: &str) -> Vec<Vec<(String, String)>> {
    let mut all = Vec::new();
    let mut current: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            if !current.is_empty() {
                all.push(std::mem::take(&mut current));
            }
        } else if line.starts_with('#') {
        } else if line.starts_with([' ', '\t']) {
            if let Some((_, value)) = current.last_mut() {
                value.push('\n');
                value.push_str(line.trim());
            }
        } else if let Some((name, value)) = line.split_once(':') {
            current.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    if !current.is_empty() {
        all.push(current);
    }
    all
}

/// A field's value (names are case-insensitive).
pub fn field<'a>(stanza: &'a [(String, String)], name: &str) -> Option<&'a str> {
    stanza
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}
