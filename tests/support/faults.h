/*
 * faults.h - the faults of the phase x fault tables (fault_test.c on
 * real jobs, fault_fake_test.c on the fake target): one list, so a new
 * fault gets its column in both.
 */
#ifndef MD_TEST_FAULTS_H
#define MD_TEST_FAULTS_H

#define FAULTS(X)                                                         \
	X(RANK_EXITS, "a rank exits")                                     \
	X(READ_FAILS, "a rank's memory reads fail")                       \
	X(RANK_STOPPED, "a rank is SIGSTOPped by someone else")           \
	X(STARTER_EXITS, "the starter exits")                             \
	X(SIGINT, "SIGINT")                                               \
	X(SIGTERM, "SIGTERM")

enum fault {
#define FAULT_ENUM(name, text) F_##name,
	FAULTS(FAULT_ENUM)
#undef FAULT_ENUM
	F_COUNT
};

static const char *const fault_names[] = {
#define FAULT_NAME(name, text) text,
	FAULTS(FAULT_NAME)
#undef FAULT_NAME
};

struct snap;

/* The victim is named as stopped by SIGSTOP, in the snapshot and in the
 * report's verdict (faults.c); phase names the phase for messages. */
void fault_expect_stopped(const struct snap *s, int victim, enum fault fault,
			  const char *phase);

/* The report's "missing:" names the victim and why it was not read. */
void fault_expect_unread_named(const struct snap *s, int victim,
			       enum fault fault, const char *phase);

/* The starter's exit during the collection is said, in the text report
 * of s and on the tool's stderr (err). */
void fault_expect_starter_gone(const struct snap *s, const char *err,
			       enum fault fault, const char *phase);

#endif /* MD_TEST_FAULTS_H */
