/**
 * Every wall-clock budget in the tests (a test's or a hook's timeout, a wait for a state) is a hang
 * detector, never a measure of speed: a passing test ends as soon as what it waits for happens. A
 * laptop or a CI runner busy with other work runs the same steps several times slower than an idle
 * machine, so each budget is this many times what an idle machine needs.
 */
export const patience = 5;

/** `milliseconds` of an idle machine, as a budget for a busy one. */
export const patientMs = (milliseconds: number) => milliseconds * patience;
