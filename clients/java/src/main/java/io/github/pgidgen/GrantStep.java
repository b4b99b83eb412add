package io.github.pgidgen;

/** What a grant-bound state machine's step gives: an id, a wait until a clock reading, or a renewal first. */
enum GrantStep {
    ID, WAIT, RENEW
}
