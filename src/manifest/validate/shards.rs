//! Validating shards: how many ways an environment or a check is split, and how a
//! check's runner takes its slice (`{shard}`, `{shards}`, `split:`, `{tests}`).

use super::*;

impl Validator<'_> {
    /// A `shards:` count: from 1 to [`MAX_SHARDS`].
    pub(super) fn shard_count(&mut self, path: &str, value: Option<u32>) {
        match value {
            Some(0) => self.error(
                path,
                "`shards: 0` splits the tests among no runner; give at least 1 (1: not sharded)",
            ),
            Some(n) if n > MAX_SHARDS => self.error(
                path,
                format!("{n} shards are more than the most allowed, {MAX_SHARDS}"),
            ),
            _ => {}
        }
    }

    /// How `raw` takes its slice when split: `split:`, else `runner` when its command
    /// has `{shard}` or `{shards}`; `None` when it always runs whole. Each key and
    /// placeholder where it does not apply is an error.
    pub(super) fn split(&mut self, path: &str, raw: &RawCheck, is_item: bool) -> Option<Split> {
        self.shard_count(&join_key(path, "shards"), raw.shards);
        let command = raw.run.as_deref().or(raw.test.as_deref());
        let command_key = join_key(path, if raw.run.is_some() { "run" } else { "test" });
        let used = command.map(placeholders_in).unwrap_or_default();
        if is_item || command.is_none() {
            let what = if is_item {
                "a group item; set it on the enclosing check"
            } else {
                "a check without a command; it applies only to `run` and `test` checks"
            };
            for (key, set) in [
                ("shards", raw.shards.is_some()),
                ("split", raw.split.is_some()),
                ("list", raw.list.is_some()),
                ("shards-may-overlap", raw.shards_may_overlap.is_some()),
            ] {
                if set {
                    self.key_error(
                        &join_key(path, key),
                        format!("`{key}` cannot be set on {what}"),
                    );
                }
            }
            if let Some(first) = used.first() {
                self.error(
                    &command_key,
                    format!("`{first}` is a shard's placeholder, which a group item cannot be given; shard the enclosing check"),
                );
            }
            return None;
        }
        let wants_list = used
            .iter()
            .any(|p| matches!(*p, "{tests}" | "{tests_file}"));
        let split = raw.split.or_else(|| {
            used.iter()
                .any(|p| matches!(*p, "{shard}" | "{shards}"))
                .then_some(Split::Runner)
        });
        let split_key = join_key(path, "split");
        match split {
            Some(Split::Timing) => {
                if raw.list.is_none() {
                    self.error(
                        &split_key,
                        "`split: timing` needs `list:`, the command that prints the runner's test ids, one per line (`pytest --collect-only -q`, `npx jest --listTests`)",
                    );
                }
                if raw.reports.is_none() {
                    self.error(
                        &split_key,
                        "`split: timing` needs `reports:`: the tests are split by the durations the runner's reports give each test, so without reports there are no test ids to time",
                    );
                }
            }
            Some(Split::Runner) if wants_list => {
                let first = used
                    .iter()
                    .find(|p| matches!(**p, "{tests}" | "{tests_file}"))
                    .copied()
                    .unwrap_or_default();
                self.error(
                    &command_key,
                    format!("`{first}` is the shard's share of the tests the tool splits by timing; set `split: timing` (with `list:`), or let the runner split with `{{shard}}`/`{{shards}}`"),
                );
            }
            Some(Split::Runner) => {}
            None if wants_list => {
                let first = used.first().copied().unwrap_or_default();
                self.error(
                    &command_key,
                    format!("`{first}` is the shard's share of the tests the tool splits by timing; set `split: timing` and `list:`"),
                );
            }
            None => {
                if raw.shards.is_some() {
                    self.key_error(
                        &join_key(path, "shards"),
                        "`shards` says how many ways to split the check, but not how its runner takes a slice: put `{shard}` and `{shards}` in the command (`--partition count:{shard}/{shards}`, `--shard={shard}/{shards}`) or set `split:`",
                    );
                }
            }
        }
        if raw.list.is_some() && split != Some(Split::Timing) {
            self.key_error(
                &join_key(path, "list"),
                "`list` gives the test ids for `split: timing`; set `split: timing` or remove it",
            );
        }
        split
    }

    /// A check that splits must be sharded in every environment it runs in: a
    /// placeholder in an unsharded one would split nothing.
    pub(super) fn sharded_everywhere(
        &mut self,
        path: &str,
        raw: &RawCheck,
        check: &Check,
        environments: &[Environment],
    ) {
        if check.split.is_none() || check.shards.is_some_and(|n| n > 1) {
            if check.shards == Some(1) && check.split.is_some() {
                self.error(
                    &join_key(path, "shards"),
                    "`shards: 1` splits nothing; give the number of runners to split the check among, or remove `shards`",
                );
            }
            return;
        }
        let command = raw.run.as_deref().or(raw.test.as_deref()).unwrap_or("");
        let what = placeholders_in(command)
            .first()
            .map(|p| format!("`{p}`"))
            .unwrap_or_else(|| format!("`split: {}`", check.split.map_or("", Split::as_str)));
        let at = if raw.split.is_some() {
            join_key(path, "split")
        } else {
            join_key(path, if raw.run.is_some() { "run" } else { "test" })
        };
        if let Some(env) = environments
            .iter()
            .find(|e| check.scope.includes(&e.name) && e.shards <= 1)
        {
            self.error(
                &at,
                format!(
                    "{what} in a check of `{}`, which is not sharded; give `{}` `shards:`, give the check its own `shards:`, or limit the check's `environment:` to sharded environments",
                    env.name, env.name
                ),
            );
        }
    }

    /// An environment split into shards needs a check that takes a slice: otherwise
    /// every shard but the first runs nothing.
    pub(super) fn shards_used(
        &mut self,
        raw: &RawManifest,
        environments: &[Environment],
        checks: &[Check],
    ) {
        for env in environments {
            if env.shards <= 1
                || checks
                    .iter()
                    .any(|c| c.split.is_some() && c.scope.includes(&env.name))
            {
                continue;
            }
            let Some(index) = raw
                .environments
                .iter()
                .position(|r| r.name == env.name.as_str())
            else {
                continue;
            };
            self.error(
                &join_key(&join_index("environments", index), "shards"),
                format!(
                    "`{}` is split into {} shards, but none of its checks says how its runner takes a slice: put `{{shard}}` and `{{shards}}` in a check's command, or set `split:` on it",
                    env.name, env.shards
                ),
            );
        }
    }
}
