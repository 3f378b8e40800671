//! Test hooks: the one way a test reaches inside a tick. They come only from
//! `HEARTH_TEST_TICK_DELAY` and `HEARTH_TEST_FAIL` in the environment of the
//! `hearth` process (read once, in `cli`); no tool of the agent can set an
//! environment variable, so the agent cannot reach them.
//!
//! - `HEARTH_TEST_TICK_DELAY=MS[@TICK]`: pause the tick this long right
//!   after its write-ahead (only tick TICK, when given), so a test can kill
//!   or time out a tick in the middle;
//! - `HEARTH_TEST_FAIL=CLASS[@TICK,TICK…]`: record a failure of that class
//!   after the tick's work (`contract-violation`, `coverage-gap`,
//!   `dispatch-miss`, `model-limitation`, `context-insufficiency`), so a test
//!   can drive the healer.

use std::time::Duration;

use crate::exchange::class::FailureKind;

/// What tests asked of ticks (see the module's doc).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TestHooks {
    delay: Option<(Duration, Option<u64>)>,
    fail: Option<(FailureKind, Vec<u64>)>,
}

impl TestHooks {
    /// From the two variables' values; a value that does not parse is no
    /// hook (these are for tests, not users).
    pub fn parse(delay: Option<&str>, fail: Option<&str>) -> TestHooks {
        TestHooks {
            delay: delay.and_then(parse_delay),
            fail: fail.and_then(parse_fail),
        }
    }

    /// The pause after tick `number`'s write-ahead.
    pub fn pause_after_write_ahead(&self, number: u64) -> Option<Duration> {
        let (pause, only) = self.delay?;
        only.is_none_or(|t| t == number).then_some(pause)
    }

    /// The failure to inject into tick `number`.
    pub fn failure(&self, number: u64) -> Option<FailureKind> {
        let (kind, ticks) = self.fail.as_ref()?;
        (ticks.is_empty() || ticks.contains(&number)).then_some(*kind)
    }
}

fn parse_delay(spec: &str) -> Option<(Duration, Option<u64>)> {
    let (ms, only) = match spec.split_once('@') {
        Some((ms, tick)) => (ms, tick.parse::<u64>().ok()),
        None => (spec, None),
    };
    Some((Duration::from_millis(ms.parse().ok()?), only))
}

fn parse_fail(spec: &str) -> Option<(FailureKind, Vec<u64>)> {
    let (class, ticks) = spec.split_once('@').unwrap_or((spec, ""));
    let ticks = ticks
        .split(',')
        .filter_map(|t| t.trim().parse::<u64>().ok())
        .collect();
    let kind = match class {
        "context-insufficiency" => FailureKind::Context,
        "coverage-gap" => FailureKind::UnknownTool,
        "dispatch-miss" => FailureKind::ToolFailed,
        "model-limitation" => FailureKind::Model,
        "contract-violation" => FailureKind::MalformedCall,
        _ => return None,
    };
    Some((kind, ticks))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_apply_to_the_ticks_they_name() {
        let hooks = TestHooks::parse(Some("1500@2"), Some("coverage-gap@3,5"));
        assert_eq!(hooks.pause_after_write_ahead(1), None);
        assert_eq!(
            hooks.pause_after_write_ahead(2),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(hooks.failure(4), None);
        assert_eq!(hooks.failure(5), Some(FailureKind::UnknownTool));
        let always = TestHooks::parse(Some("20"), Some("contract-violation"));
        assert_eq!(always.failure(9), Some(FailureKind::MalformedCall));
        assert_eq!(
            always.pause_after_write_ahead(9),
            Some(Duration::from_millis(20))
        );
        assert_eq!(TestHooks::parse(None, None), TestHooks::default());
        // A class that is not one is no hook, not a contract violation.
        let nonsense = TestHooks::parse(None, Some("nonsense@1"));
        assert_eq!(nonsense.failure(1), None);
        assert_eq!(nonsense, TestHooks::default());
    }
}
