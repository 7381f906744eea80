//! The vault's own tests: seal and open, the associated data, rotation, failures closed,
//! the key text and its errors, the start-up check, and that nothing prints material.

use base64::Engine as _;

use super::keys::KEY_BYTES;
use super::*;

/// A key line of 32 bytes `fill`.
fn line(id: &str, fill: u8) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode([fill; KEY_BYTES]);
    format!("{id}:{encoded}")
}

fn keys(text: &str) -> Keys {
    Keys::parse(text, "the test's keys").unwrap()
}

const SECRET: &[u8] = b"sk_live_the-person's-own-key";

fn sealed(keys: &Keys) -> Sealed {
    seal(keys, Purpose::Credential, "VidGen", "alice", SECRET).unwrap()
}

#[test]
fn a_sealed_credential_opens_for_its_principal_and_connector() {
    let ring = keys(&line("k1", 1));
    let sealed = sealed(&ring);
    assert_eq!(sealed.key_id, "k1");
    assert_eq!(sealed.nonce.len(), NONCE_BYTES);
    assert_eq!(sealed.ciphertext.len(), SECRET.len() + 16);
    assert!(
        !sealed.ciphertext.windows(SECRET.len()).any(|w| w == SECRET),
        "the ciphertext is not the plaintext"
    );
    let opened = open(&ring, Purpose::Credential, "VidGen", "alice", &sealed).unwrap();
    assert_eq!(opened.plaintext.as_slice(), SECRET);
    assert!(!opened.stale);
    // Random nonces: the same plaintext seals differently each time.
    assert_ne!(sealed.nonce, self::sealed(&ring).nonce);
}

/// A row copied to another person, connector or table does not open, and neither do the
/// splits the length prefixes exist for (`ab`+`c` against `a`+`bc`).
#[test]
fn another_principal_connector_or_purpose_does_not_open_it() {
    let ring = keys(&line("k1", 1));
    let sealed = sealed(&ring);
    for (purpose, connector, principal) in [
        (Purpose::Credential, "VidGen", "bob"),
        (Purpose::Credential, "Other", "alice"),
        (Purpose::Pending, "VidGen", "alice"),
        (Purpose::Credential, "VidGe", "nalice"),
        (Purpose::Credential, "VidGenalice", ""),
    ] {
        let e = open(&ring, purpose, connector, principal, &sealed).unwrap_err();
        assert!(
            matches!(&e, OpenError::Refused { key_id, .. } if key_id == "k1"),
            "{purpose:?} {connector} {principal}: {e:?}"
        );
    }
}

#[test]
fn a_flipped_byte_does_not_open() {
    let ring = keys(&line("k1", 1));
    let good = sealed(&ring);
    for at in 0..good.ciphertext.len() {
        let mut bad = good.clone();
        bad.ciphertext[at] ^= 0x01;
        assert!(open(&ring, Purpose::Credential, "VidGen", "alice", &bad).is_err());
    }
    let mut bad = good.clone();
    bad.nonce[3] ^= 0x80;
    assert!(open(&ring, Purpose::Credential, "VidGen", "alice", &bad).is_err());
    // A nonce of the wrong length (a row altered in the database) is refused, not a panic.
    let mut short = good.clone();
    short.nonce.pop();
    let e = open(&ring, Purpose::Credential, "VidGen", "alice", &short).unwrap_err();
    assert!(matches!(e, OpenError::Refused { .. }), "{e:?}");
    let mut empty = good;
    empty.ciphertext.clear();
    assert!(open(&ring, Purpose::Credential, "VidGen", "alice", &empty).is_err());
}

/// Rotation: a new first line, the old key kept below it. A row sealed with the old key
/// opens, marked stale; `reseal` seals it with the new key, which then opens it unstale.
#[test]
fn a_row_of_the_older_key_opens_stale_and_reseals_with_the_current_one() {
    let old_ring = keys(&line("k1", 1));
    let old = sealed(&old_ring);
    let ring = keys(&format!("{}\n{}\n", line("k2", 2), line("k1", 1)));
    assert_eq!(ring.current_id(), "k2");
    let opened = open(&ring, Purpose::Credential, "VidGen", "alice", &old).unwrap();
    assert!(opened.stale);
    assert_eq!(opened.plaintext.as_slice(), SECRET);
    let new = reseal(&ring, Purpose::Credential, "VidGen", "alice", &opened)
        .unwrap()
        .expect("a stale row is sealed again");
    assert_eq!(new.key_id, "k2");
    let again = open(&ring, Purpose::Credential, "VidGen", "alice", &new).unwrap();
    assert!(!again.stale);
    assert_eq!(again.plaintext.as_slice(), SECRET);
    assert!(
        reseal(&ring, Purpose::Credential, "VidGen", "alice", &again)
            .unwrap()
            .is_none(),
        "nothing to do for a row of the current key"
    );
    // The new key alone (k1 retired) cannot open the old row.
    let e = open(
        &keys(&line("k2", 2)),
        Purpose::Credential,
        "VidGen",
        "alice",
        &old,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "it is sealed with the key `k1`, which the test's keys does not have"
    );
}

#[test]
fn an_unknown_key_id_or_another_key_under_the_same_id_fails_closed() {
    let sealed = sealed(&keys(&line("k1", 1)));
    let e = open(
        &keys(&line("k9", 1)),
        Purpose::Credential,
        "VidGen",
        "alice",
        &sealed,
    )
    .unwrap_err();
    assert!(
        matches!(&e, OpenError::UnknownKey { key_id, .. } if key_id == "k1"),
        "{e:?}"
    );
    let e = open(
        &keys(&line("k1", 7)),
        Purpose::Credential,
        "VidGen",
        "alice",
        &sealed,
    )
    .unwrap_err();
    assert!(
        matches!(&e, OpenError::Refused { key_id, .. } if key_id == "k1"),
        "{e:?}"
    );
}

#[test]
fn nothing_prints_key_material_or_a_plaintext() {
    let text = format!("{}\n{}", line("k2", 0xab), line("k1", 0xcd));
    let ring = keys(&text);
    let opened = open(
        &ring,
        Purpose::Credential,
        "VidGen",
        "alice",
        &sealed(&ring),
    )
    .unwrap();
    let shown = format!("{ring:?} {opened:?} {ring:#?} {opened:#?}");
    let secret = String::from_utf8_lossy(SECRET);
    for material in [
        base64::engine::general_purpose::STANDARD.encode([0xab; KEY_BYTES]),
        base64::engine::general_purpose::STANDARD.encode([0xcd; KEY_BYTES]),
        "171, 171".to_string(),
        "0xab".to_string(),
        secret.to_string(),
        format!("{SECRET:?}"),
    ] {
        assert!(!shown.contains(&material), "{shown} shows {material}");
    }
    assert!(
        shown.contains("k2") && shown.contains("k1") && shown.contains("stale"),
        "{shown}"
    );
}

/// The key text: comments, blank lines, several keys on a line (an environment value),
/// padding optional; the first key is the current one.
#[test]
fn the_key_text_allows_comments_blank_lines_and_one_line() {
    let unpadded = line("k1", 1).trim_end_matches('=').to_string();
    let text = format!(
        "# rotated 2026-12\n\n  {}   # the current key\n{unpadded}\n",
        line("k-2_b.x", 2)
    );
    let ring = keys(&text);
    assert_eq!(ring.current_id(), "k-2_b.x");
    let one_line =
        Keys::from_env("CG_KEYS", &format!("{}, {}", line("a", 1), line("b", 2))).unwrap();
    assert_eq!(one_line.current_id(), "a");
    assert!(format!("{one_line:?}").contains("the environment variable CG_KEYS"));
}

/// Every refusal says where and what, and never echoes the entry it refuses.
#[test]
fn a_malformed_key_text_is_refused_without_echoing_it() {
    let short = format!(
        "k1:{}",
        base64::engine::general_purpose::STANDARD.encode([9u8; 16])
    );
    let no_id = base64::engine::general_purpose::STANDARD.encode([5u8; 32]);
    let cases = [
        ("", "holds no key"),
        ("# nothing but a comment\n\n", "holds no key"),
        (no_id.as_str(), "line 1: not `ID:BASE64`"),
        ("bad!id:QUJD", "line 1: a key id is 1 to 32"),
        (":QUJD", "line 1: a key id is 1 to 32"),
        (
            "k1:not*base64*at*all*zzzzzzzzzzzzzzzzzzzz",
            "the key `k1` is not in base64",
        ),
        (
            short.as_str(),
            "the key `k1` is 16 bytes; a key is 32 random bytes",
        ),
    ];
    for (text, expected) in cases {
        let e = Keys::from_env("CG_KEYS", text).unwrap_err().to_string();
        assert!(e.starts_with("the environment variable CG_KEYS"), "{e}");
        assert!(e.contains(expected), "{text:?}: {e}");
        if let Some((_, value)) = text.split_once(':') {
            assert!(
                !value.is_empty() && !e.contains(value),
                "{e} echoes {value}"
            );
        } else if !text.trim().is_empty() && !text.starts_with('#') {
            assert!(!e.contains(text), "{e} echoes {text}");
        }
    }
    let twice = format!("{}\n{}", line("k1", 1), line("k1", 2));
    let e = Keys::from_env("CG_KEYS", &twice).unwrap_err().to_string();
    assert!(
        e.ends_with("the key id `k1` is given twice (each key needs its own id)"),
        "{e}"
    );
    let two_on_a_line = format!("{} k2:QUJD", line("k1", 1));
    let e = Keys::from_env("CG_KEYS", &two_on_a_line)
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 1, key 2: the key `k2` is 3 bytes"), "{e}");
}

#[test]
fn a_key_file_is_read_and_a_missing_or_huge_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("keys");
    std::fs::write(&path, format!("{}\n", line("k1", 1))).unwrap();
    let ring = Keys::from_file(&path).unwrap();
    assert_eq!(ring.current_id(), "k1");
    assert!(ring.from().starts_with("the key file "), "{}", ring.from());
    let e = Keys::from_file(&dir.path().join("absent"))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("the key file ") && e.contains("absent"),
        "{e}"
    );
    std::fs::write(&path, "#".repeat(70_000)).unwrap();
    let e = Keys::from_file(&path).unwrap_err().to_string();
    assert!(e.contains("not a key file"), "{e}");
}

#[test]
fn a_new_key_line_is_a_working_key_and_never_the_same_twice() {
    let first = new_key_line("k2").unwrap();
    let second = new_key_line("k2").unwrap();
    assert_ne!(*first, *second);
    assert!(
        first.starts_with("k2:") && first.len() == 3 + 44,
        "{}",
        first.len()
    );
    let ring = keys(&first);
    let opened = open(
        &ring,
        Purpose::Credential,
        "VidGen",
        "alice",
        &sealed(&ring),
    )
    .unwrap();
    assert_eq!(opened.plaintext.as_slice(), SECRET);
    assert!(new_key_line("no spaces").is_err());
    assert!(new_key_line("").is_err());
}

#[test]
fn a_plaintext_past_the_bound_is_refused() {
    let ring = keys(&line("k1", 1));
    let e = seal(
        &ring,
        Purpose::Credential,
        "c",
        "p",
        &vec![0; MAX_PLAINTEXT + 1],
    )
    .unwrap_err();
    assert!(matches!(e, SealError::TooLong { .. }), "{e:?}");
    seal(
        &ring,
        Purpose::Credential,
        "c",
        "p",
        &vec![0; MAX_PLAINTEXT],
    )
    .unwrap();
}

fn used(key_id: &str, rows: u64, check: Option<Sealed>) -> KeyUse {
    KeyUse {
        key_id: key_id.into(),
        rows,
        check,
    }
}

/// The start-up check: on an empty ledger the current key's check value is recorded;
/// then the same ring passes with nothing to record, and a ring with another key under
/// that id is refused, saying which key, where, and what to do.
#[test]
fn the_start_up_check_records_the_current_key_then_refuses_a_wrong_one() {
    let ring = Keys::from_env("CG_KEYS", &line("k1", 1)).unwrap();
    let record = check_keys(&ring, "VidGen", &[]).unwrap();
    assert_eq!(record.len(), 1);
    let check = record[0].clone();
    assert_eq!(check.key_id, "k1");
    confirm_check(&ring, "VidGen", &check).unwrap();
    let recorded = [used("k1", 3, Some(check.clone()))];
    assert_eq!(check_keys(&ring, "VidGen", &recorded).unwrap(), []);
    let wrong = Keys::from_env("CG_KEYS", &line("k1", 2)).unwrap();
    let e = check_keys(&wrong, "VidGen", &recorded).unwrap_err();
    assert_eq!(
        e,
        KeyCheckError::Wrong {
            key_id: "k1".into(),
            from: "the environment variable CG_KEYS".into()
        }
    );
    assert!(
        e.to_string().starts_with(
            "the credential key `k1` in the environment variable CG_KEYS does not open the \
             credentials sealed with it: "
        ),
        "{e}"
    );
    // Another connector's check value is not this one's.
    assert!(check_keys(&ring, "Other", &recorded).is_err());
    assert!(confirm_check(&wrong, "VidGen", &check).is_err());
}

#[test]
fn the_start_up_check_refuses_a_ring_without_a_key_rows_are_sealed_with() {
    let old = keys(&line("k1", 1));
    let check = check_keys(&old, "VidGen", &[]).unwrap().remove(0);
    let rotated = Keys::from_env("CG_KEYS", &line("k2", 2)).unwrap();
    let e = check_keys(&rotated, "VidGen", &[used("k1", 2, Some(check.clone()))]).unwrap_err();
    assert!(matches!(&e, KeyCheckError::Missing { key_id, rows: 2, .. } if key_id == "k1"));
    assert!(
        e.to_string()
            .contains("sealed with the credential key `k1`, which the environment variable CG_KEYS does not have"),
        "{e}"
    );
    // Once no row is sealed with it, k1 is retired: its check value is left alone, and the
    // new current key's is recorded.
    let record = check_keys(&rotated, "VidGen", &[used("k1", 0, Some(check.clone()))]).unwrap();
    assert_eq!(
        record.iter().map(|s| s.key_id.as_str()).collect::<Vec<_>>(),
        ["k2"]
    );
    // Both kept: k1 still checked, k2 recorded.
    let both = keys(&format!("{}\n{}", line("k2", 2), line("k1", 1)));
    let record = check_keys(&both, "VidGen", &[used("k1", 2, Some(check))]).unwrap();
    assert_eq!(
        record.iter().map(|s| s.key_id.as_str()).collect::<Vec<_>>(),
        ["k2"]
    );
}
