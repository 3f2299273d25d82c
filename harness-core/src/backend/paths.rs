//! Lexical path resolution (C14a): no file system access, ever.

/// Joins `path` onto `cwd` when it is relative (and a `cwd` is known), then normalizes it.
///
/// ```
/// use harness_agents_core::backend::paths::resolve;
///
/// assert_eq!(resolve("src/../a.rs", Some("/p")), "/p/a.rs");
/// assert_eq!(resolve("/etc//hosts/", Some("/p")), "/etc/hosts");
/// assert_eq!(resolve("../x", None), "../x");
/// ```
pub fn resolve(path: &str, cwd: Option<&str>) -> String {
    match cwd {
        Some(dir) if !path.starts_with('/') && !dir.is_empty() => {
            let mut joined = String::with_capacity(dir.len() + 1 + path.len());
            joined.push_str(dir);
            joined.push('/');
            joined.push_str(path);
            normalize(&joined)
        }
        _ => normalize(path),
    }
}

/// Normalizes a path lexically: empty and `.` segments dropped, `..` removes the segment
/// before it (dropped at the root; kept at the start of a relative path), no trailing `/`
/// except for the root, and an empty relative result is `.`.
pub fn normalize(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if absolute => {}
                _ => parts.push(".."),
            },
            other => parts.push(other),
        }
    }
    let body = parts.join("/");
    if absolute {
        format!("/{body}")
    } else if body.is_empty() {
        ".".to_string()
    } else {
        body
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c14a_normalizes_lexically() {
        assert_eq!(normalize("/"), "/");
        assert_eq!(normalize("//"), "/");
        assert_eq!(normalize("/.."), "/");
        assert_eq!(normalize("/a/../../b"), "/b");
        assert_eq!(normalize("a/./b/"), "a/b");
        assert_eq!(normalize("a/.."), ".");
        assert_eq!(normalize(""), ".");
        assert_eq!(normalize("../../a"), "../../a");
        assert_eq!(normalize("a/../../b"), "../b");
        assert_eq!(normalize("./"), ".");
    }

    #[test]
    fn c14a_joins_relative_paths_only() {
        assert_eq!(resolve("b", Some("/a")), "/a/b");
        assert_eq!(resolve("/b", Some("/a")), "/b");
        assert_eq!(resolve("b", None), "b");
        assert_eq!(resolve("..", Some("/")), "/");
        assert_eq!(resolve("x", Some("rel/dir")), "rel/dir/x");
    }
}
