//! Pushing the home's branch to a remote: the off-box copy of the mind.
//!
//! Credentials come only from the environment or the SSH agent, never
//! from a file hearth writes: the SSH agent for `ssh://` remotes,
//! `HEARTH_GIT_USERNAME` / `HEARTH_GIT_PASSWORD` (read by `cli`, passed in
//! as [`RemoteCredentials`]) for `https://`, nothing for `git://` and paths.
//! ssh and https go through the `git` command (`git_cli`), with the same
//! credentials. hearth never rewrites its history, so a push is never
//! forced: a remote whose branch holds commits this home does not (another
//! home pushes there) is refused before anything is sent — libgit2 leaves
//! that check to the server, and a bare repository would accept the push
//! and drop the other's commits — and said so, with the fix.

use std::time::Duration;

use git2::{Cred, CredentialType, PushOptions, RemoteCallbacks};

use super::credentials::RemoteCredentials;
use super::git_cli::{needs_git_command, GitCommand};
use super::{Repo, RepoError};

impl Repo {
    /// Pushes the current branch to the branch of the same name on
    /// `remote`, and returns the commit pushed. A push over ssh or https
    /// goes through the `git` command, bounded by `timeout` (libgit2 here
    /// carries paths, `file://` and `git://`, unbounded).
    pub fn push(
        &self,
        remote: &str,
        credentials: &RemoteCredentials,
        timeout: Duration,
    ) -> Result<String, RepoError> {
        let err = |e: git2::Error| super::git_error(&self.root, e);
        let head = self.git.head().map_err(err)?;
        let branch = head
            .shorthand()
            .filter(|_| head.is_branch())
            .ok_or_else(|| RepoError::Git {
                path: self.root.clone(),
                message: "HEAD is not on a branch; nothing to push".into(),
            })?
            .to_string();
        let pushed = head.target().map(|id| id.to_string()).unwrap_or_default();
        let mut origin = self.git.find_remote(remote).map_err(|e| RepoError::Git {
            path: self.root.clone(),
            message: format!(
                "{e}; add it with `git -C {} remote add {remote} URL`",
                self.root.display()
            ),
        })?;
        let url = origin.pushurl().or(origin.url()).unwrap_or("").to_string();
        if needs_git_command(&url) {
            return self.push_with_git(remote, &branch, credentials, timeout, pushed);
        }
        // libgit2 leaves the fast-forward check to the server, and a bare
        // repository accepts a push that drops commits: checked here, from
        // what the remote advertises, before anything is sent.
        self.refuse_if_behind(remote, &url, &branch, &pushed, credentials, timeout)?;
        let mut rejected: Option<String> = None;
        {
            let mut callbacks = asking(credentials);
            callbacks.push_update_reference(|refname, status| {
                if let Some(status) = status {
                    rejected = Some(format!("{refname}: {status}"));
                }
                Ok(())
            });
            let mut options = PushOptions::new();
            options.remote_callbacks(callbacks);
            let spec = format!("refs/heads/{branch}:refs/heads/{branch}");
            origin
                .push(&[spec.as_str()], Some(&mut options))
                .map_err(|e| {
                    if diverged(e.message()) {
                        RepoError::PushDiverged {
                            path: self.root.clone(),
                            remote: remote.to_string(),
                            message: e.message().to_string(),
                        }
                    } else {
                        err(e)
                    }
                })?;
        }
        match rejected {
            Some(why) if diverged(&why) => Err(RepoError::PushDiverged {
                path: self.root.clone(),
                remote: remote.to_string(),
                message: why,
            }),
            Some(why) => Err(RepoError::Git {
                path: self.root.clone(),
                message: format!("the remote {remote} refused the push ({why})"),
            }),
            None => Ok(pushed),
        }
    }

    /// Refuses, before anything is sent, to push `ours` where the remote's
    /// `branch` holds commits this home's history does not: libgit2 leaves
    /// the fast-forward check to the server, and a bare repository accepts
    /// a push that drops commits.
    fn refuse_if_behind(
        &self,
        remote: &str,
        url: &str,
        branch: &str,
        ours: &str,
        credentials: &RemoteCredentials,
        timeout: Duration,
    ) -> Result<(), RepoError> {
        let theirs = self.advertised(url, branch, credentials, timeout)?;
        let (Some(theirs), Ok(ours)) = (theirs, git2::Oid::from_str(ours)) else {
            return Ok(());
        };
        if theirs == ours || self.git.graph_descendant_of(ours, theirs).unwrap_or(false) {
            return Ok(());
        }
        Err(RepoError::PushDiverged {
            path: self.root.clone(),
            remote: remote.to_string(),
            message: format!(
                "its {branch} is at {theirs}, which this home's history does not hold: \
                 non-fast-forward"
            ),
        })
    }

    /// Where `url`'s `branch` is now, as the remote advertises it (`git
    /// ls-remote`, bounded by `timeout`); none when it has no such branch.
    fn advertised(
        &self,
        url: &str,
        branch: &str,
        credentials: &RemoteCredentials,
        timeout: Duration,
    ) -> Result<Option<git2::Oid>, RepoError> {
        let git = self.git_command(credentials, timeout);
        let wanted = format!("refs/heads/{branch}");
        let what = format!(
            "asking {} where its {branch} is",
            crate::config::secret_url::masked(url)
        );
        let said = git.run_reading(&what, &["ls-remote", "--heads", url, &wanted])?;
        Ok(said
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .find(|(_, name)| *name == wanted)
            .and_then(|(id, _)| git2::Oid::from_str(id).ok()))
    }

    /// The `git` command on this repository, with `credentials`, bounded
    /// by `timeout`.
    fn git_command<'a>(
        &'a self,
        credentials: &'a RemoteCredentials,
        timeout: Duration,
    ) -> GitCommand<'a> {
        GitCommand {
            git_dir: self.git.path(),
            credentials,
            timeout,
            cancel: None,
        }
    }

    /// The push through the `git` command; the remote-tracking branch moves
    /// as libgit2's push moves it, so `unpushed` reads the same.
    fn push_with_git(
        &self,
        remote: &str,
        branch: &str,
        credentials: &RemoteCredentials,
        timeout: Duration,
        pushed: String,
    ) -> Result<String, RepoError> {
        let git = self.git_command(credentials, timeout);
        let spec = format!("refs/heads/{branch}:refs/heads/{branch}");
        let what = format!("pushing to {remote}");
        git.run(&what, &["push", "--quiet", "--no-verify", remote, &spec])
            .map_err(|e| match e {
                RepoError::Git { path, message } if diverged(&message) => RepoError::PushDiverged {
                    path,
                    remote: remote.to_string(),
                    message,
                },
                RepoError::Git { path, message } if message.contains("[rejected]") => {
                    RepoError::Git {
                        path,
                        message: format!("the remote {remote} refused the push ({message})"),
                    }
                }
                other => other,
            })?;
        Ok(pushed)
    }

    /// Whether the repository has a remote named `name`.
    pub fn has_remote(&self, name: &str) -> bool {
        self.git.find_remote(name).is_ok()
    }

    /// How many commits of HEAD the remote-tracking branch of `remote`
    /// lacks (all of them when nothing was pushed yet).
    pub fn unpushed(&self, remote: &str) -> Option<usize> {
        let head = self.git.head().ok()?;
        let branch = head.shorthand()?.to_string();
        let local = head.target()?;
        match self
            .git
            .refname_to_id(&format!("refs/remotes/{remote}/{branch}"))
        {
            Ok(tracked) => self
                .git
                .graph_ahead_behind(local, tracked)
                .ok()
                .map(|(ahead, _)| ahead),
            Err(_) => {
                let mut walk = self.git.revwalk().ok()?;
                walk.push(local).ok()?;
                Some(walk.count())
            }
        }
    }
}

/// The callbacks that answer a remote's request for credentials: the SSH
/// agent, or the user name and password from the environment; three tries.
fn asking(credentials: &RemoteCredentials) -> RemoteCallbacks<'_> {
    let mut callbacks = RemoteCallbacks::new();
    let mut tried = 0u32;
    callbacks.credentials(move |_url, user_from_url, allowed| {
        tried += 1;
        if tried > 3 {
            return Err(git2::Error::from_str(
                "the remote refused every credential offered",
            ));
        }
        if allowed.contains(CredentialType::SSH_KEY) {
            return Cred::ssh_key_from_agent(user_from_url.unwrap_or("git"));
        }
        if allowed.contains(CredentialType::USER_PASS_PLAINTEXT) {
            if let (Some(user), Some(password)) = (&credentials.username, &credentials.password) {
                return Cred::userpass_plaintext(user, password);
            }
            return Err(git2::Error::from_str(
                "the remote asks for a user name and password: set \
                 HEARTH_GIT_USERNAME and HEARTH_GIT_PASSWORD in hearth's environment",
            ));
        }
        Cred::default()
    });
    callbacks
}

/// Whether git's words on a refused push say the remote has commits this
/// side lacks (libgit2: "cannot push non-fastforwardable reference"; the
/// `git` command: "[rejected] … (fetch first)" or "(non-fast-forward)").
fn diverged(said: &str) -> bool {
    let said = said.to_lowercase();
    said.contains("non-fastforward")
        || said.contains("non-fast-forward")
        || said.contains("fetch first")
}
