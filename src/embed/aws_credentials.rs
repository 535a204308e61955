//! AWS credentials for the Bedrock backends, from the standard chain: the environment
//! (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), else the profile
//! `AWS_PROFILE` (or `default`) of the shared credentials file
//! (`AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`) and then of the config
//! file (`AWS_CONFIG_FILE`, else `~/.aws/config`).
//!
//! Profiles that get credentials another way (SSO, an assumed role, a
//! `credential_process`) are named as unsupported with the command that exports their
//! credentials. The secret key and the session token are never formatted: `Debug`
//! redacts them and [`AwsCredentials::redact`] scrubs them from server messages.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// An access key, its secret and, for temporary credentials, the session token.
#[derive(Clone)]
pub struct AwsCredentials {
    pub access_key_id: String,
    secret_access_key: String,
    session_token: Option<String>,
}

impl std::fmt::Debug for AwsCredentials {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            formatter,
            "AwsCredentials({}, <redacted>{})",
            self.access_key_id,
            if self.session_token.is_some() {
                ", <redacted token>"
            } else {
                ""
            }
        )
    }
}

/// Where an environment variable's value comes from (the process environment, or a map
/// in tests).
pub type Environment<'a> = &'a dyn Fn(&str) -> Option<String>;

impl AwsCredentials {
    pub fn new(
        access_key_id: &str,
        secret_access_key: &str,
        session_token: Option<&str>,
    ) -> AwsCredentials {
        AwsCredentials {
            access_key_id: access_key_id.to_owned(),
            secret_access_key: secret_access_key.to_owned(),
            session_token: session_token.map(str::to_owned),
        }
    }

    /// For the signature only; never format or log it.
    pub fn secret_access_key(&self) -> &str {
        &self.secret_access_key
    }

    pub fn session_token(&self) -> Option<&str> {
        self.session_token.as_deref()
    }

    /// `text` with the secret key and the session token replaced.
    pub fn redact(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for secret in [Some(&self.secret_access_key), self.session_token.as_ref()]
            .into_iter()
            .flatten()
            .filter(|secret| secret.len() >= 4)
        {
            text = text.replace(secret.as_str(), "<redacted>");
        }
        text
    }

    /// The credentials of the standard chain, read from the process environment.
    pub fn from_chain() -> Result<AwsCredentials, String> {
        AwsCredentials::from_chain_in(&|name| std::env::var(name).ok(), dirs::home_dir())
    }

    /// The chain against `environment`, with `home` for the default file locations.
    pub fn from_chain_in(
        environment: Environment<'_>,
        home: Option<PathBuf>,
    ) -> Result<AwsCredentials, String> {
        let variable = |name: &str| {
            environment(name)
                .map(|value| value.trim().to_owned())
                .filter(|value| !value.is_empty())
        };
        match (
            variable("AWS_ACCESS_KEY_ID"),
            variable("AWS_SECRET_ACCESS_KEY"),
        ) {
            (Some(id), Some(secret)) => {
                return Ok(AwsCredentials::new(
                    &id,
                    &secret,
                    variable("AWS_SESSION_TOKEN").as_deref(),
                ))
            }
            (Some(_), None) => {
                return Err("AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not".into())
            }
            (None, Some(_)) => {
                return Err("AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not".into())
            }
            (None, None) => {}
        }
        let profile = variable("AWS_PROFILE").unwrap_or_else(|| "default".to_owned());
        let aws_directory = home.map(|home| home.join(".aws"));
        let file = |variable_name: &str, default_name: &str| {
            variable(variable_name)
                .map(PathBuf::from)
                .or_else(|| aws_directory.as_ref().map(|dir| dir.join(default_name)))
        };
        let credentials_file = file("AWS_SHARED_CREDENTIALS_FILE", "credentials");
        let config_file = file("AWS_CONFIG_FILE", "config");
        let config_section = if profile == "default" {
            "default".to_owned()
        } else {
            format!("profile {profile}")
        };
        let mut looked_in = Vec::new();
        for (path, section) in [
            (&credentials_file, profile.clone()),
            (&config_file, config_section),
        ] {
            let Some(path) = path else { continue };
            looked_in.push(path.display().to_string());
            let Some(values) = read_profile(path, &section)? else {
                continue;
            };
            if let Some(credentials) = profile_credentials(&values, &profile, path)? {
                return Ok(credentials);
            }
        }
        Err(format!(
            "no AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set and profile {profile:?} has no aws_access_key_id in {}",
            if looked_in.is_empty() {
                "the shared credentials or config file (no home directory)".to_owned()
            } else {
                looked_in.join(" or ")
            }
        ))
    }
}

/// The credentials a profile's `values` hold; `None` when it names none (the chain goes
/// on to the next file).
fn profile_credentials(
    values: &BTreeMap<String, String>,
    profile: &str,
    path: &Path,
) -> Result<Option<AwsCredentials>, String> {
    match (
        values.get("aws_access_key_id"),
        values.get("aws_secret_access_key"),
    ) {
        (Some(id), Some(secret)) => Ok(Some(AwsCredentials::new(
            id,
            secret,
            values.get("aws_session_token").map(String::as_str),
        ))),
        (Some(_), None) => Err(format!(
            "{}: profile {profile:?} has aws_access_key_id but no aws_secret_access_key",
            path.display()
        )),
        _ => match ["sso_session", "sso_start_url", "role_arn", "credential_process", "web_identity_token_file"]
            .iter()
            .find(|key| values.contains_key(**key))
        {
            Some(key) => Err(format!(
                "{}: profile {profile:?} gets its credentials through {key}, which hyde-eval does not follow\n    hint: export them first: eval \"$(aws configure export-credentials --profile {profile} --format env)\"",
                path.display()
            )),
            None => Ok(None),
        },
    }
}

/// The `key = value` pairs of section `[name]` of an INI-style AWS file; `None` when
/// the file or the section is absent.
fn read_profile(path: &Path, name: &str) -> Result<Option<BTreeMap<String, String>>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(format!("{}: cannot read: {error}", path.display())),
    };
    Ok(profile_section(&text, name))
}

/// Section `[name]` of `text` (names compared with inner spaces collapsed; `#` and `;`
/// start comments; indented lines continue a nested block and are skipped).
fn profile_section(text: &str, name: &str) -> Option<BTreeMap<String, String>> {
    let mut current: Option<String> = None;
    let mut found: Option<BTreeMap<String, String>> = None;
    for line in text.lines() {
        if line.starts_with([' ', '\t']) {
            continue;
        }
        let line = line.trim();
        if line.is_empty() || line.starts_with(['#', ';']) {
            continue;
        }
        if let Some(section) = line
            .strip_prefix('[')
            .and_then(|rest| rest.strip_suffix(']'))
        {
            let section = section.split_whitespace().collect::<Vec<_>>().join(" ");
            if section == name {
                found.get_or_insert_with(BTreeMap::new);
            }
            current = Some(section);
            continue;
        }
        if current.as_deref() != Some(name) {
            continue;
        }
        if let (Some((key, value)), Some(values)) = (line.split_once('='), found.as_mut()) {
            values.insert(key.trim().to_ascii_lowercase(), value.trim().to_owned());
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(variables: &[(&str, &str)], home: Option<&Path>) -> Result<AwsCredentials, String> {
        let variables: BTreeMap<String, String> = variables
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect();
        AwsCredentials::from_chain_in(
            &|name| variables.get(name).cloned(),
            home.map(Path::to_path_buf),
        )
    }

    #[test]
    fn the_environment_comes_first_with_its_session_token() {
        let credentials = chain(
            &[
                ("AWS_ACCESS_KEY_ID", "AKIDENV"),
                ("AWS_SECRET_ACCESS_KEY", "env-secret"),
                ("AWS_SESSION_TOKEN", "env-token"),
                ("AWS_PROFILE", "ignored"),
            ],
            None,
        )
        .unwrap();
        assert_eq!(credentials.access_key_id, "AKIDENV");
        assert_eq!(credentials.secret_access_key(), "env-secret");
        assert_eq!(credentials.session_token(), Some("env-token"));
        let debug = format!("{credentials:?}");
        assert!(!debug.contains("env-secret") && !debug.contains("env-token"));
        assert_eq!(
            credentials.redact("echo env-secret and env-token"),
            "echo <redacted> and <redacted>"
        );
        let half = chain(&[("AWS_ACCESS_KEY_ID", "AKIDENV")], None).unwrap_err();
        assert!(half.contains("AWS_SECRET_ACCESS_KEY is not"), "{half}");
    }

    #[test]
    fn profiles_are_read_from_the_credentials_then_the_config_file() {
        let home = tempfile::tempdir().unwrap();
        let aws = home.path().join(".aws");
        std::fs::create_dir(&aws).unwrap();
        std::fs::write(
            aws.join("credentials"),
            "# comment\n[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = default-secret\n\n\
             [work]\naws_access_key_id=AKIDWORK\naws_secret_access_key=work-secret\naws_session_token = work-token\n",
        )
        .unwrap();
        std::fs::write(
            aws.join("config"),
            "[default]\nregion = us-east-1\n[profile cfg]\naws_access_key_id = AKIDCFG\naws_secret_access_key = cfg-secret\n\
             [profile sso]\nsso_session = corp\n[profile  empty ]\nregion = eu-west-1\n",
        )
        .unwrap();
        let home = Some(home.path());
        let default = chain(&[], home).unwrap();
        assert_eq!(
            (default.access_key_id.as_str(), default.session_token()),
            ("AKIDDEFAULT", None)
        );
        let work = chain(&[("AWS_PROFILE", "work")], home).unwrap();
        assert_eq!(
            (
                work.access_key_id.as_str(),
                work.secret_access_key(),
                work.session_token()
            ),
            ("AKIDWORK", "work-secret", Some("work-token"))
        );
        let config = chain(&[("AWS_PROFILE", "cfg")], home).unwrap();
        assert_eq!(config.access_key_id, "AKIDCFG");
        let sso = chain(&[("AWS_PROFILE", "sso")], home).unwrap_err();
        assert!(
            sso.contains("sso_session") && sso.contains("export-credentials --profile sso"),
            "{sso}"
        );
        let empty = chain(&[("AWS_PROFILE", "empty")], home).unwrap_err();
        assert!(
            empty.contains("profile \"empty\" has no aws_access_key_id"),
            "{empty}"
        );
        let missing = chain(&[("AWS_PROFILE", "nowhere")], home).unwrap_err();
        assert!(missing.contains("credentials or "), "{missing}");
    }

    #[test]
    fn the_file_variables_move_the_files() {
        let directory = tempfile::tempdir().unwrap();
        let file = directory.path().join("creds.ini");
        std::fs::write(
            &file,
            "[default]\naws_access_key_id = AKIDFILE\naws_secret_access_key = file-secret\n",
        )
        .unwrap();
        let credentials = chain(
            &[("AWS_SHARED_CREDENTIALS_FILE", file.to_str().unwrap())],
            None,
        )
        .unwrap();
        assert_eq!(credentials.access_key_id, "AKIDFILE");
    }
}
