//! The claim patterns (`exchange::claims`) on what real small models said
//! to an operator's messages (`scripts/claims-sample`: SmolLM2-135M and
//! Gemma 3 270M served by llama-server, sixty messages twice each, and
//! SmolLM2 once more asked to say what it did; no tools offered, so
//! nothing a reply says it did was done). `labels.json` holds sentences of
//! those replies labelled by hand: claims the patterns must flag, and
//! near-misses they must not. Every flagged sentence must be labelled, so
//! a pattern change that flags something new fails here until a person has
//! read it.

use std::collections::BTreeMap;

use serde::Deserialize;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/claims");

#[derive(Deserialize)]
struct Recorded {
    model: String,
    reply: String,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct Labels {
    about: String,
    /// Sentences (as the claim shows them) that claim a done act.
    claims: Vec<String>,
    /// Sentences the patterns flag that claim no done act.
    not_claims: Vec<String>,
}

#[test]
fn the_claim_patterns_on_recorded_real_model_replies_flag_every_labelled_claim_and_no_near_miss() {
    let labels: Labels =
        serde_json::from_str(&std::fs::read_to_string(format!("{DATA}/labels.json")).unwrap())
            .unwrap();
    let mut replies: BTreeMap<String, usize> = BTreeMap::new();
    let mut flagged: Vec<String> = Vec::new();
    let mut everything = String::new();
    for entry in std::fs::read_dir(DATA).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        for line in std::fs::read_to_string(&path).unwrap().lines() {
            let recorded: Recorded = serde_json::from_str(line).unwrap();
            *replies.entry(recorded.model.clone()).or_default() += 1;
            flagged.extend(
                hearth::exchange::claims::claims(&recorded.reply)
                    .into_iter()
                    .map(|c| c.words),
            );
            everything.push_str(&recorded.reply);
        }
    }
    println!("replies: {replies:?}");
    assert!(replies.values().sum::<usize>() >= 300, "{replies:?}");
    // Every label is a sentence the models said.
    for sentence in labels.claims.iter().chain(&labels.not_claims) {
        assert!(
            everything.contains(sentence.as_str()),
            "not in the recordings: {sentence:?}"
        );
    }
    let unlabelled: Vec<&String> = flagged
        .iter()
        .filter(|f| !labels.claims.contains(f) && !labels.not_claims.contains(f))
        .collect();
    assert!(
        unlabelled.is_empty(),
        "flagged, never labelled (read each, add it to tests/data/claims/labels.json): {unlabelled:#?}"
    );
    let wrong: Vec<&String> = flagged
        .iter()
        .filter(|f| labels.not_claims.contains(f))
        .collect();
    let missed: Vec<&String> = labels
        .claims
        .iter()
        .filter(|c| !flagged.contains(c))
        .collect();
    println!(
        "flagged {} sentences: {} false positives; {} of {} labelled claims missed",
        flagged.len(),
        wrong.len(),
        missed.len(),
        labels.claims.len()
    );
    assert!(wrong.is_empty(), "false positives: {wrong:?}");
    assert!(missed.is_empty(), "missed claims: {missed:?}");
}
