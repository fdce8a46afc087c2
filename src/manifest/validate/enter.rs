//! Validating `enter:`, how `run` gets into an environment from a machine that is not
//! it: exactly one way in, each with what it needs; and, once the manifest's folder is
//! known, the files a way in names (a Compose file and its service, a dev container's
//! configuration).

use std::path::Path;

use super::*;
use crate::manifest::Engine;
use crate::manifest::diagnostic::suggestion;
use crate::manifest::files::NamedFiles;

/// The Compose files `docker compose` reads when none is named, in its order.
const COMPOSE_FILES: [&str; 4] = [
    "compose.yaml",
    "compose.yml",
    "docker-compose.yaml",
    "docker-compose.yml",
];

impl Validator<'_> {
    /// `enter:` of `env`: exactly one way in, with what that way needs.
    pub(super) fn enter(&mut self, path: &str, env: &RawEnvironment) -> Option<Enter> {
        let raw = env.enter.as_ref()?;
        let given: Vec<&str> = [
            ("command", raw.command.is_some()),
            ("container", raw.container.is_some()),
            ("compose", raw.compose.is_some()),
            ("devcontainer", raw.devcontainer.is_some()),
            ("ssh", raw.ssh.is_some()),
        ]
        .into_iter()
        .filter_map(|(key, set)| set.then_some(key))
        .collect();
        match given.as_slice() {
            [] => {
                self.error(
                    path,
                    "`enter` says no way in; give one of `command`, `container`, `compose`, `devcontainer`, `ssh`",
                );
                return None;
            }
            [_] => {}
            [first, rest @ ..] => {
                self.error(
                    &join_key(path, rest[0]),
                    format!(
                        "`enter` gives more than one way in (`{first}`, {}); give one",
                        rest.iter()
                            .map(|k| format!("`{k}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                );
                return None;
            }
        }
        if let Some(words) = &raw.command {
            return self.enter_command(&join_key(path, "command"), words);
        }
        if let Some(container) = &raw.container {
            let at = join_key(path, "container");
            let engine = self.engine(&join_key(&at, "engine"), container.engine.as_deref())?;
            let image = container.image.clone().or_else(|| image_of(env));
            let Some(image) = image.filter(|i| !i.trim().is_empty()) else {
                self.error(
                    &at,
                    "`enter.container` has no image: give `image`, or the environment's `container`",
                );
                return None;
            };
            if image.starts_with('-') {
                self.error(
                    &join_key(&at, "image"),
                    format!("`{image}` is not an image name (it begins with `-`)"),
                );
                return None;
            }
            return Some(Enter::Container {
                engine,
                image,
                options: container.options.clone(),
            });
        }
        if let Some(compose) = &raw.compose {
            let at = join_key(path, "compose");
            let engine = self.engine(&join_key(&at, "engine"), compose.engine.as_deref())?;
            if compose.service.trim().is_empty() || compose.service.starts_with('-') {
                self.error(
                    &join_key(&at, "service"),
                    format!("`{}` is not a service name", compose.service),
                );
                return None;
            }
            return Some(Enter::Compose {
                engine,
                file: compose.file.clone().unwrap_or_default(),
                service: compose.service.clone(),
            });
        }
        if let Some(folder) = &raw.devcontainer {
            if folder.trim().is_empty() {
                self.error(
                    &join_key(path, "devcontainer"),
                    "`enter.devcontainer` is empty; give the folder of `.devcontainer/` (`.`) or the configuration file",
                );
                return None;
            }
            return Some(Enter::Devcontainer {
                config: folder.clone(),
            });
        }
        let ssh = raw.ssh.as_ref()?;
        let at = join_key(path, "ssh");
        if ssh.host.trim().is_empty() || ssh.host.starts_with('-') {
            self.error(
                &join_key(&at, "host"),
                format!("`{}` is not a host ssh can reach", ssh.host),
            );
            return None;
        }
        if !ssh.path.starts_with('/') {
            self.error(
                &join_key(&at, "path"),
                format!(
                    "`enter.ssh.path` is relative (`{}`); give the absolute path of the folder on `{}` the repository is copied to",
                    ssh.path, ssh.host
                ),
            );
            return None;
        }
        // Judged by its normal form (`/srv/../..` is `/`): every copy removes the last
        // copy's files there and unpacks the repository into it.
        let normal = normal_remote_path(&ssh.path);
        if ssh.path.contains('\0') || is_system_folder(&normal) {
            self.error(
                &join_key(&at, "path"),
                format!(
                    "`{}` ({normal}) cannot hold the repository: the tool removes what it copied there before each copy; give a folder of its own (e.g. `/srv/{}`)",
                    ssh.path, env.name
                ),
            );
            return None;
        }
        Some(Enter::Ssh {
            host: ssh.host.clone(),
            path: normal,
            port: ssh.port,
            options: ssh.options.clone(),
        })
    }

    /// `enter.command`: words, the first a program, one binding `{repo}`.
    fn enter_command(&mut self, at: &str, words: &[String]) -> Option<Enter> {
        if words.first().is_none_or(|w| w.trim().is_empty()) {
            self.error(
                at,
                "`enter.command` is empty; give the program and its arguments, one word per item",
            );
            return None;
        }
        if words.iter().any(|w| w.contains('\0')) {
            self.error(at, "`enter.command` contains a NUL character");
            return None;
        }
        if !words.iter().any(|w| w.contains(REPO_PLACEHOLDER)) {
            self.error(
                at,
                "`enter.command` does not bind `{repo}`: the repository must be reachable inside at the same path, where the checks run and the results are written (e.g. `--bind {repo} {repo}`)",
            );
            return None;
        }
        Some(Enter::Command(words.to_vec()))
    }

    /// A container engine's name; `docker` when none is given.
    fn engine(&mut self, at: &str, name: Option<&str>) -> Option<Engine> {
        let Some(name) = name else {
            return Some(Engine::Docker);
        };
        let engine = Engine::from_name(name);
        if engine.is_none() {
            self.error(
                at,
                format!(
                    "unknown container engine `{name}`{}; give {}",
                    suggestion(name, Engine::NAMES),
                    Engine::NAMES.map(|n| format!("`{n}`")).join(" or ")
                ),
            );
        }
        engine
    }
}

/// The image of an environment's `container:` (a name, or a mapping's `image`).
fn image_of(env: &RawEnvironment) -> Option<String> {
    let container = env.container.as_ref()?;
    container
        .as_str()
        .or_else(|| container.get("image")?.as_str())
        .map(str::to_owned)
}

/// Finds the files the ways in of `environments` name, relative to the repository's
/// folder `dir`: the Compose file (the default one when none is named) and that its
/// service is defined there, a dev container's configuration. Each way in is left
/// naming its file as found; each missing file or service is a diagnostic at its key.
pub fn resolve_enter_files(
    environments: &mut [Environment],
    files: &dyn NamedFiles,
    spans: &Spans,
) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    for (i, env) in environments.iter_mut().enumerate() {
        let at = join_key(&join_index("environments", i), "enter");
        let mut problem = |key: &str, message: String| {
            let path = join_key(&at, key);
            let pos = spans.locate(&path);
            problems.push(Diagnostic::new(path, message, pos));
        };
        // What a way in reads is the repository's: a path that leaves it is refused
        // (a manifest from a pull request is read on CI too).
        let outside = |given: &str| {
            let path = Path::new(given);
            path.is_absolute()
                || path.has_root()
                || path
                    .components()
                    .any(|c| matches!(c, std::path::Component::ParentDir))
        };
        match &mut env.enter {
            Some(Enter::Compose { file, .. }) if outside(file) => problem(
                "compose.file",
                format!("`{file}` is outside the repository; give a path inside it"),
            ),
            Some(Enter::Devcontainer { config }) if outside(config) => problem(
                "devcontainer",
                format!("`{config}` is outside the repository; give a path inside it"),
            ),
            Some(Enter::Compose { file, service, .. }) => {
                if file.is_empty() {
                    // The first that is there, whatever it is (one that cannot be read
                    // is said so below, never passed over for the next).
                    match COMPOSE_FILES
                        .iter()
                        .find(|f| !matches!(files.read(f), Ok(None)))
                    {
                        Some(found) => *file = (*found).to_owned(),
                        None => {
                            problem(
                                "compose",
                                format!(
                                    "no Compose file in the repository ({}); name it with `file`",
                                    COMPOSE_FILES.join(", ")
                                ),
                            );
                            continue;
                        }
                    }
                }
                match compose_services(files, file) {
                    Err(why) => problem("compose.file", format!("`{file}` {why}")),
                    Ok(services) if !services.contains(service) => problem(
                        "compose.service",
                        format!(
                            "service `{service}` is not in `{file}`{}; it defines: {}",
                            suggestion(service, services.iter().map(String::as_str)),
                            if services.is_empty() {
                                "none".to_owned()
                            } else {
                                services.join(", ")
                            }
                        ),
                    ),
                    Ok(_) => {}
                }
            }
            Some(Enter::Devcontainer { config }) => match devcontainer_config(files, config) {
                Some(found) => *config = found,
                None => problem(
                    "devcontainer",
                    format!(
                        "`{config}` has no dev container configuration in the repository (`.devcontainer/devcontainer.json` or `.devcontainer.json` in that folder, or a `.json` file)"
                    ),
                ),
            },
            _ => {}
        }
    }
    problems
}

/// An absolute remote path with `.`, `..` and repeated or trailing `/` resolved as text
/// (the remote's links are not known here): `/srv/./work/`, `/srv/../srv/work` →
/// `/srv/work`; `/..` → `/`.
fn normal_remote_path(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    format!("/{}", parts.join("/"))
}

/// Whether `normal` (a normal absolute path) is the root or one of the system's own
/// top-level folders, which no copy of a repository may take over.
fn is_system_folder(normal: &str) -> bool {
    const SYSTEM: &[&str] = &[
        "bin",
        "boot",
        "dev",
        "etc",
        "home",
        "lib",
        "lib32",
        "lib64",
        "libx32",
        "media",
        "mnt",
        "opt",
        "proc",
        "root",
        "run",
        "sbin",
        "srv",
        "sys",
        "tmp",
        "usr",
        "var",
        "Users",
        "Library",
        "System",
        "Applications",
        "private",
        "Volumes",
    ];
    match normal.strip_prefix('/') {
        None | Some("") => true,
        Some(top) => !top.contains('/') && SYSTEM.contains(&top),
    }
}

/// The services the Compose file `file` defines, or why it cannot be read.
fn compose_services(files: &dyn NamedFiles, file: &str) -> Result<Vec<String>, String> {
    let bytes = files
        .read(file)?
        .ok_or_else(|| "does not exist".to_owned())?;
    let text = String::from_utf8(bytes)
        .map_err(|_| "is not a Compose file (it is not UTF-8)".to_owned())?;
    let value: serde_yaml::Value = serde_yaml::from_str(&text)
        .map_err(|e| format!("is not a Compose file (it is not YAML: {e})"))?;
    let Some(services) = value.get("services").and_then(|s| s.as_mapping()) else {
        return Err("is not a Compose file (it has no `services`)".to_owned());
    };
    Ok(services
        .keys()
        .filter_map(|k| k.as_str().map(str::to_owned))
        .collect())
}

/// A dev container's configuration named by `given` (a folder or a `.json` file),
/// relative to `dir`, as the devcontainer CLI finds it.
fn devcontainer_config(files: &dyn NamedFiles, given: &str) -> Option<String> {
    let given = given.trim_end_matches('/');
    if given.ends_with(".json") {
        return files.is_file(given).then(|| given.to_owned());
    }
    [".devcontainer/devcontainer.json", ".devcontainer.json"]
        .into_iter()
        .map(|f| {
            if given == "." || given.is_empty() {
                f.to_owned()
            } else {
                format!("{given}/{f}")
            }
        })
        .find(|f| files.is_file(f))
}
