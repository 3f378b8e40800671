//! Where the money went: a span of ledger lines priced by kind of token
//! (uncached input, cache reads, writes by lifetime, output), the cache's
//! hit ratio, and a month at the rate. Pure: the callers read the ledger
//! (`hearth status`, the budget flares).

use chrono::{DateTime, Duration, Utc};

use crate::config::Price;
use crate::exchange::ledger::TickRecord;

/// Spend over a span of ticks, by kind of token.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct SpendByKind {
    /// Ticks counted.
    pub ticks: usize,
    /// Dollars the ledger recorded for them.
    pub usd: f64,
    /// Input sent at the full price.
    pub uncached_usd: f64,
    /// Cache reads.
    pub read_usd: f64,
    /// Cache writes, both lifetimes.
    pub write_usd: f64,
    /// Output.
    pub output_usd: f64,
    /// Input tokens sent, however priced.
    pub sent_tokens: u64,
    /// Of them, read from the cache.
    pub read_tokens: u64,
    /// Of them, written to the cache.
    pub written_tokens: u64,
    /// From the first counted tick's start to the end of the span.
    #[serde(skip)]
    pub covered: Duration,
}

impl SpendByKind {
    /// The ticks of `records` that ended in `[from, to)`, priced at `price`
    /// (the total is the ledger's own figure; the parts are at `price`).
    pub fn of(
        records: &[TickRecord],
        price: Option<&Price>,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> SpendByKind {
        let per = |tokens: u64, rate: f64| tokens as f64 * rate / 1_000_000.0;
        let mut spend = SpendByKind::default();
        let mut first: Option<DateTime<Utc>> = None;
        for r in records.iter().filter(|r| r.end >= from && r.end < to) {
            let t = &r.tokens;
            spend.ticks += 1;
            spend.usd += r.cost_usd;
            spend.sent_tokens += t.sent();
            spend.read_tokens += t.cache_read;
            spend.written_tokens += t.cache_write + t.cache_write_1h;
            if let Some(p) = price {
                spend.uncached_usd += per(t.input, p.input_per_mtok);
                spend.read_usd += per(t.cache_read, p.cache_read());
                spend.write_usd +=
                    per(t.cache_write, p.cache_write()) + per(t.cache_write_1h, p.cache_write_1h());
                spend.output_usd += per(t.output, p.output_per_mtok);
            }
            first = Some(first.map_or(r.start, |f| f.min(r.start)));
        }
        spend.covered = first.map_or(Duration::zero(), |f| to - f);
        spend
    }

    /// Of the input sent, the part read from the cache (none sent: none).
    pub fn hit_ratio(&self) -> Option<f64> {
        (self.sent_tokens > 0).then(|| self.read_tokens as f64 / self.sent_tokens as f64)
    }

    /// Thirty days at this span's rate, once it covers an hour (a rate
    /// from minutes of ticks says little).
    pub fn projected_month(&self) -> Option<f64> {
        let hours = self.covered.num_seconds() as f64 / 3600.0;
        (hours >= 1.0).then(|| self.usd / hours * 24.0 * 30.0)
    }

    /// One sentence for the budget flares: the ticks' spend as the ledger
    /// recorded it, and how it divides between the cache's writes and reads
    /// and the rest. The parts are shares of the ledger's total (priced at
    /// today's price), so they add up to what was spent whatever the price
    /// was when each tick ran; a price changed since is said.
    pub fn breakdown(&self) -> String {
        let priced = self.write_usd + self.read_usd + self.uncached_usd + self.output_usd;
        let total = format!(
            "The ticks spent ${:.2} today ({} tick{})",
            self.usd,
            self.ticks,
            if self.ticks == 1 { "" } else { "s" }
        );
        if priced <= 0.0 || self.usd <= 0.0 {
            return total;
        }
        let share = |part: f64| part / priced * self.usd;
        let repriced = (priced - self.usd).abs() > 0.01 * self.usd;
        format!(
            "{total}: ${:.2} on cache writes ({} tokens), ${:.2} on cache reads ({} tokens, {:.0}% of the input sent), ${:.2} on input sent uncached and ${:.2} on output{}",
            share(self.write_usd),
            self.written_tokens,
            share(self.read_usd),
            self.read_tokens,
            100.0 * self.hit_ratio().unwrap_or(0.0),
            share(self.uncached_usd),
            share(self.output_usd),
            if repriced {
                " (split by today's price, which differs from the one the ticks were charged at)"
            } else {
                ""
            }
        )
    }
}

/// Today's (UTC) ticks in the home's ledger, priced: for the budget flares
/// (none when the ledger cannot be read; the flare goes out without it).
pub fn today(
    home: &crate::home::Home,
    price: Option<&Price>,
    now: DateTime<Utc>,
) -> Option<SpendByKind> {
    let midnight = now.date_naive().and_hms_opt(0, 0, 0)?.and_utc();
    let records = crate::exchange::ledger::Ledger::since(&home.ticks_path(), midnight).ok()?;
    let spend = SpendByKind::of(&records, price, midnight, now + Duration::seconds(1));
    (spend.ticks > 0).then_some(spend)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exchange::ledger::Tokens;

    fn tick(hour: i64, tokens: Tokens, usd: f64) -> TickRecord {
        let at = DateTime::from_timestamp(1_800_000_000 + hour * 3600, 0).unwrap();
        let mut r: TickRecord = serde_json::from_value(serde_json::json!({
            "tick": hour, "start": at, "end": at, "exit": 0, "class": "ok"
        }))
        .unwrap();
        r.tokens = tokens;
        r.cost_usd = usd;
        r
    }

    #[test]
    fn reads_and_writes_are_priced_apart_and_a_month_is_projected_from_the_rate() {
        let price = Price {
            input_per_mtok: 3.0,
            output_per_mtok: 15.0,
            ..Price::default()
        };
        let tokens = Tokens {
            input: 100,
            output: 200,
            cache_read: 60_000,
            cache_write: 0,
            cache_write_1h: 1_000,
        };
        let records: Vec<TickRecord> = (0..4).map(|h| tick(h, tokens, 0.03)).collect();
        let from = records[0].start;
        let to = from + Duration::hours(4);
        let spend = SpendByKind::of(&records, Some(&price), from, to);
        assert_eq!(spend.ticks, 4);
        assert!((spend.read_usd - 4.0 * 60_000.0 * 0.3 / 1e6).abs() < 1e-12);
        assert!((spend.write_usd - 4.0 * 1_000.0 * 6.0 / 1e6).abs() < 1e-12);
        let ratio = spend.hit_ratio().unwrap();
        assert!((ratio - 60_000.0 / 61_100.0).abs() < 1e-12, "{ratio}");
        let month = spend.projected_month().unwrap();
        assert!((month - 0.12 / 4.0 * 24.0 * 30.0).abs() < 1e-9, "{month}");
        assert!(spend.breakdown().contains("cache writes (4000 tokens)"));
    }

    #[test]
    fn the_breakdown_adds_up_to_what_the_ledger_recorded() {
        // The ledger recorded $3.60; at today's price the same tokens
        // would be thousands of dollars (a price changed, or a tick
        // charged at another model's price): the parts are shares of the
        // $3.60, never a figure bigger than what was spent.
        let price = Price {
            input_per_mtok: 3.0,
            output_per_mtok: 15.0,
            ..Price::default()
        };
        let tokens = Tokens {
            input: 600_000_000,
            output: 1_000,
            cache_read: 2_000_000,
            cache_write: 0,
            cache_write_1h: 0,
        };
        let records: Vec<TickRecord> = (0..4).map(|h| tick(h, tokens, 0.90)).collect();
        let from = records[0].start;
        let text =
            SpendByKind::of(&records, Some(&price), from, from + Duration::hours(4)).breakdown();
        let dollars: Vec<f64> = text
            .split('$')
            .skip(1)
            .map(|d| {
                let n: String = d
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '.')
                    .collect();
                n.parse().unwrap()
            })
            .collect();
        assert_eq!(dollars[0], 3.60, "{text}");
        let parts: f64 = dollars[1..].iter().sum();
        assert!((parts - 3.60).abs() < 0.02, "{text}");
        assert!(
            text.contains("differs from the one the ticks were charged at"),
            "{text}"
        );
    }
}
