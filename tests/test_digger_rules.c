/*
 * test_digger_rules.c - the digger rules engine (core/digger/engine.c) and
 * the rules half of the terrain modules.
 *
 * The heart is a table of rule cases, one per rule and interaction: a small
 * level drawn as a picture (tests/digger_support.h), a list of taps, each
 * marked when it must be refused, and the expected positions, gold, frozen
 * machines, turns and arrow uses afterwards. Every case replays the same
 * taps through dig_replay too. Around it: a property test (thousands of
 * random taps on random levels with every terrain: each undo restores the
 * exact bytes, refused taps change nothing, replay agrees with stepping),
 * geometry, refusal messages, the undo log's bound, and dig_level_check on
 * broken levels, each message naming its field. The terrain registry and
 * the hook contract: test_digger_terrain.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "digger/digger.h"
#include "digger_support.h"
#include "rng.h"
#include "support.h"

/* ---- the rule table ---- */

typedef struct rule_case {
	const char *name;
	const char *pic;      /* the level (digger_support.h) */
	dig_rules rules;      /* rules in force */
	int uses;             /* every arrow's uses, before `arrows` */
	int turns;            /* the turn budget */
	const char *arrows;   /* arrow overrides, or NULL */
	const char *taps;     /* "L0 T1 !R0": '!' marks a tap that must be refused */
	const char *pos;      /* expected positions "x,y x,y ..." of machines 0, 1, ... */
	int gold_left;        /* expected gold still on the grid */
	int frozen;           /* expected frozen mask */
	int turns_left;       /* expected turns left */
	const char *uses_now; /* expected uses "L0=0 T1=2", or NULL */
} rule_case;

#define NO_RULES                                  \
	{                                         \
		false, false, false, false, false \
	}
#define SHUFFLE                                  \
	{                                        \
		true, false, false, false, false \
	}
#define BACKTRACK                                \
	{                                        \
		false, true, false, false, false \
	}
#define IN_ORDER                                 \
	{                                        \
		false, false, true, false, false \
	}
#define ANY_DIR                                  \
	{                                        \
		false, false, false, true, false \
	}

static const rule_case CASES[] = {
	/* moving together and blocking */
	{ "two in a row move together", "@0 @1 . ./. . . $", NO_RULES, 1, 20, NULL, "L0", "1,0 2,0",
	  1, 0, 19, "L0=0" },
	{ "three in a row move together", "@0 @1 @2 ./. . . $", NO_RULES, 1, 20, NULL, "L0",
	  "1,0 2,0 3,0", 1, 0, 19, NULL },
	{ "three in a row move left onto gold", "$ @0 @1 @2/. . . .", NO_RULES, 1, 20, NULL, "R0",
	  "0,0 1,0 2,0", 0, 0, 19, "R0=0" },
	{ "a chain pressed against the edge: nobody moves", ". @0 @1 @2/$ . . .", NO_RULES, 1, 20,
	  NULL, "!L0", "1,0 2,0 3,0", 1, 0, 20, "L0=1" },
	{ "a chain pressed against stone: nobody moves", "@0 @1 # ./$ . . .", NO_RULES, 1, 20, NULL,
	  "!L0", "0,0 1,0", 1, 0, 20, "L0=1" },
	{ "a free machine moves while another is blocked", "@0 . @1 #/$ . . .", NO_RULES, 1, 20,
	  NULL, "L0", "1,0 2,0", 1, 0, 19, NULL },
	{ "two in a column move together", "@0 ./@1 ./. $", NO_RULES, 1, 20, NULL, "T0", "0,1 0,2",
	  1, 0, 19, NULL },
	{ "a machine the arrow does not move blocks", "@0 @1/@2 ./. $", ANY_DIR, 1, 20, "L0=1v",
	  "L0", "0,0 1,1 0,1", 1, 0, 19, NULL },
	{ "a frozen machine blocks the one behind it", ". @1 @0 i ./. . . . $", NO_RULES, 2, 20,
	  NULL, "L0 !L0", "3,0 2,0", 1, 1, 19, "L0=1" },
	{ "a frozen machine is not moved", "@0 i . ./$ . . .", NO_RULES, 2, 20, NULL, "L0 !L0 !R0",
	  "1,0", 1, 1, 19, NULL },

	/* ice and lava */
	{ "ice then lava in one turn: the frozen machine thaws", "@0 i @1 l/$ . . .", NO_RULES, 1,
	  20, NULL, "L0", "1,0 3,0", 1, 0, 19, NULL },
	{ "lava then ice in machine order: still thawed", "@0 l @1 i/$ . . .", NO_RULES, 1, 20,
	  NULL, "L0", "1,0 3,0", 1, 0, 19, NULL },
	{ "lava thaws a machine frozen earlier, ice stays icy", "@0 i ./@1 l ./. . $", NO_RULES, 2,
	  20, NULL, "L0 L1 L0 R0", "1,0 1,1", 1, 1, 16, NULL },
	{ "lava with nobody frozen changes nothing", "@0 l ./. . $", NO_RULES, 1, 20, NULL, "L0",
	  "1,0", 1, 0, 19, NULL },

	/* arrows and turns */
	{ "an exhausted arrow is refused", "@0 . . ./. . . $", NO_RULES, 2, 20, NULL, "L0 L0 !L0",
	  "2,0", 1, 0, 18, "L0=0 R0=2" },
	{ "a hidden arrow (no uses) is refused", "@0 . ./. . $", NO_RULES, 1, 20, "L0=0", "!L0 T0",
	  "0,1", 1, 0, 19, "L0=0 T0=0" },
	{ "an exhausted turn budget refuses every tap", "@0 . . ./. . . $", NO_RULES, 9, 2, NULL,
	  "L0 L0 !L0 !T2", "2,0", 1, 0, 0, "L0=7" },

	/* stone */
	{ "stone without a mask blocks everyone", "@0 # ./@1 # $", NO_RULES, 1, 20, NULL, "!L0 !L1",
	  "0,0 0,1", 1, 0, 20, NULL },
	{ "stone lets the machines in its mask through", "@0 #:1 ./@1 #:1 $", NO_RULES, 1, 20, NULL,
	  "L0 !L1", "1,0 0,1", 1, 0, 19, NULL },
	{ "stone with a mask of two machines", "@0 #:3 ./@1 #:3 $", NO_RULES, 1, 20, NULL, "L0 L1",
	  "1,0 1,1", 1, 0, 18, NULL },

	/* web */
	{ "web: the first of two visits leaves the gold", "@0 w2$ ./. . .", NO_RULES, 2, 20, NULL,
	  "L0", "1,0", 1, 0, 19, NULL },
	{ "web: the second visit collects the gold", "@0 w2$ ./. . .", NO_RULES, 2, 20, NULL,
	  "L0 L0 R0", "1,0", 0, 0, 17, NULL },
	{ "web with a mask: other machines' visits do not count", "@0 w1:2$ ./@1 . .", NO_RULES, 2,
	  20, NULL, "L0 L0 R0", "1,0 0,1", 1, 0, 17, NULL },
	{ "web with a mask: its machine collects", "@0 w1:2$ ./@1 . .", NO_RULES, 2, 20, NULL,
	  "L0 L0 L1 B1", "2,0 1,0", 0, 0, 16, NULL },
	{ "web: a visit after wearing through collects too", "@0 w1$2 $1/. . .", IN_ORDER, 2, 20,
	  NULL, "L0 L0 R0", "1,0", 0, 0, 17, NULL },

	/* treasure and energy */
	{ "treasure gives its arrows one use, once", "@0 t1 . ./. . . $", NO_RULES, 9, 20, "L0=1",
	  "L0 L0 R0 !L0", "1,0", 1, 0, 17, "L0=0 R0=8" },
	{ "treasure can give hidden column arrows", "@0 t12 ./. . $", NO_RULES, 1, 20, "T1=0 B1=0",
	  "L0 T1", "1,1", 1, 0, 18, "T1=0 B1=1 L0=0" },
	{ "energy gives its turns back, once", "@0 e3 . ./. . . $", NO_RULES, 9, 2, NULL,
	  "L0 L0 R0", "1,0", 1, 0, 2, NULL },
	{ "energy for two machines in one tap", "@0 e2 @1 e1/$ . . .", NO_RULES, 9, 1, NULL,
	  "L0 T1", "1,1 3,0", 1, 0, 2, NULL },

	/* path rules */
	{ "without no_shuffle a machine steps back", "@0 . ./. . $", NO_RULES, 1, 20, NULL, "L0 R0",
	  "0,0", 1, 0, 18, NULL },
	{ "no_shuffle refuses the step back", "@0 . ./. . $", SHUFFLE, 1, 20, NULL, "L0 !R0", "1,0",
	  1, 0, 19, NULL },
	{ "no_shuffle allows a loop back to the start", "@0 . $/. . .", SHUFFLE, 1, 20, NULL,
	  "L0 T1 R1 B0", "0,0", 1, 0, 16, NULL },
	{ "no_backtrack refuses the start cell", "@0 . $/. . .", BACKTRACK, 1, 20, NULL,
	  "L0 T1 R1 !B0", "0,1", 1, 0, 17, NULL },
	{ "no_backtrack refuses any visited cell", "@0 . . ./. . . $", BACKTRACK, 2, 20, NULL,
	  "L0 L0 !R0", "2,0", 1, 0, 18, NULL },

	/* gold */
	{ "gold is collected on entering", "@0 $ ./. . .", NO_RULES, 1, 20, NULL, "L0", "1,0", 0, 0,
	  19, NULL },
	{ "gold_in_order leaves a later gold", "@0 $2 $1/. . .", IN_ORDER, 3, 20, NULL, "L0", "1,0",
	  2, 0, 19, NULL },
	{ "gold_in_order takes the first gold", "@0 $2 $1/. . .", IN_ORDER, 3, 20, NULL, "L0 L0",
	  "2,0", 1, 0, 18, NULL },
	{ "gold_in_order takes the second gold on return", "@0 $2 $1/. . .", IN_ORDER, 3, 20, NULL,
	  "L0 L0 R0", "1,0", 0, 0, 17, NULL },
	{ "gold_in_order: two golds in one tap, in machine order", "@0 $1 @1 $2/. . . .", IN_ORDER,
	  1, 20, NULL, "L0", "1,0 3,0", 0, 0, 19, NULL },
	{ "gold_in_order: a later machine's gold does not count first", "@0 $2 @1 $1/. . . .",
	  IN_ORDER, 1, 20, NULL, "L0", "1,0 3,0", 1, 0, 19, NULL },

	/* any_direction */
	{ "any_direction: a row arrow pointing up", "$ ./@0 .", ANY_DIR, 1, 20, "L1=1^", "L1",
	  "0,0", 0, 0, 19, NULL },
	{ "any_direction: a column arrow pointing right", "@0 $/. .", ANY_DIR, 1, 20, "T0=1>", "T0",
	  "1,0", 0, 0, 19, NULL },
	{ "any_direction: a row arrow pointing out of the grid", "@0 ./. $", ANY_DIR, 1, 20,
	  "L0=1^", "!L0", "0,0", 1, 0, 20, NULL },

	/* path rules inside a chain: a front machine the rule stops blocks the
	 * one behind it, exactly as the edge does */
	{ "a chain: both step left when the rules allow", "@0 . ./$ . @1", NO_RULES, 1, 20, NULL,
	  "L0 B2 R0", "0,0 1,0", 1, 0, 17, NULL },
	{ "no_shuffle stops the front machine and the one behind", "@0 . ./$ . @1", SHUFFLE, 1, 20,
	  NULL, "L0 B2 !R0", "1,0 2,0", 1, 0, 18, "R0=1" },
	{ "no_backtrack stops the front machine and the one behind", "@0 . ./$ . @1", BACKTRACK, 1,
	  20, NULL, "L0 B2 !R0", "1,0 2,0", 1, 0, 18, "R0=1" },
	{ "a column pressed against the bottom edge: nobody moves", "$ ./. ./@0 ./@1 .", NO_RULES,
	  1, 20, NULL, "!T0", "0,2 0,3", 1, 0, 20, "T0=1" },
	{ "a column with room moves together onto gold", "$ ./@0 ./@1 ./. .", NO_RULES, 1, 20, NULL,
	  "B0", "0,0 0,1", 0, 0, 19, NULL },
};

/* Parses "x,y x,y" into cells; returns how many. */
static int parse_cells(const dig_level *lv, const char *s, int cells[DIG_MAX_MACHINES])
{
	int n = 0;
	while (*s && n < DIG_MAX_MACHINES) {
		char *end;
		int x = (int)strtol(s, &end, 10);
		int y = (int)strtol(end + 1, &end, 10);
		cells[n++] = dig_cell(lv, x, y);
		s = end;
		while (*s == ' ')
			s++;
	}
	return n;
}

static void run_case(const rule_case *rc)
{
	dig_level lv;
	sf_err err;
	if (dig_picture(rc->pic, rc->uses, rc->turns, &lv) != 0 || dig_arrows(&lv, rc->arrows) != 0)
		fail_msg("%s: bad picture", rc->name);
	lv.rules = rc->rules;
	if (dig_level_check(&lv, &err) != 0)
		fail_msg("%s: level refused: %s", rc->name, err.msg);

	dig_state s, before;
	dig_cmd cmd;
	dig_state_init(&lv, &s);
	uint8_t taps[64];
	int ntaps = 0;
	for (const char *p = rc->taps; *p;) {
		while (*p == ' ')
			p++;
		bool refused = *p == '!';
		if (refused)
			p++;
		int slot = dig_slot_named(&lv, &p);
		if (slot < 0)
			fail_msg("%s: bad tap list", rc->name);
		before = s;
		bool valid = dig_arrow_valid(&lv, &s, slot);
		int r = dig_arrow_do(&lv, &s, slot, &cmd);
		if (refused) {
			if (valid || r != SF_EINVAL || memcmp(&s, &before, sizeof s) != 0)
				fail_msg("%s: tap %d was not refused cleanly", rc->name, slot);
			continue;
		}
		if (!valid || r != 0)
			fail_msg("%s: tap %d was refused", rc->name, slot);
		/* Undo and redo: the same bytes both ways. */
		dig_state after = s;
		dig_arrow_undo(&s, &cmd);
		if (memcmp(&s, &before, sizeof s) != 0)
			fail_msg("%s: undo of tap %d is not exact", rc->name, slot);
		assert_int_equal(dig_arrow_do(&lv, &s, slot, &cmd), 0);
		assert_memory_equal(&s, &after, sizeof s);
		taps[ntaps++] = (uint8_t)slot;
	}

	int want[DIG_MAX_MACHINES];
	int n = parse_cells(&lv, rc->pos, want);
	if (n != lv.machines)
		fail_msg("%s: %d expected positions for %d machines", rc->name, n, lv.machines);
	for (int m = 0; m < n; m++)
		if (s.pos[m] != want[m])
			fail_msg("%s: machine %d at (%d,%d), expected (%d,%d)", rc->name, m,
				 s.pos[m] % lv.w, s.pos[m] / lv.w, want[m] % lv.w, want[m] / lv.w);
	if (__builtin_popcountll(s.gold) != rc->gold_left)
		fail_msg("%s: %d gold left, expected %d", rc->name, __builtin_popcountll(s.gold),
			 rc->gold_left);
	if (s.frozen != rc->frozen)
		fail_msg("%s: frozen %d, expected %d", rc->name, s.frozen, rc->frozen);
	if (s.turns_left != rc->turns_left)
		fail_msg("%s: %d turns left, expected %d", rc->name, s.turns_left, rc->turns_left);
	assert_int_equal(s.turns_used, ntaps);
	for (const char *p = rc->uses_now; p && *p;) {
		int slot = dig_slot_named(&lv, &p);
		int u = (int)strtol(p + 1, (char **)&p, 10);
		if (slot < 0 || s.uses[slot] != u)
			fail_msg("%s: slot %d has %d uses, expected %d", rc->name, slot,
				 slot < 0 ? -1 : s.uses[slot], u);
	}
	assert_int_equal(dig_won(&s), s.gold == 0);

	/* dig_replay of the valid taps agrees. */
	int gold = -1, turns = -1;
	if (dig_replay(&lv, taps, ntaps, &gold, &turns, &err) != 0)
		fail_msg("%s: replay failed: %s", rc->name, err.msg);
	int start_gold = 0;
	for (int c = 0; c < lv.w * lv.h; c++)
		start_gold += lv.gold[c] != 0;
	assert_int_equal(gold, start_gold - rc->gold_left);
	assert_int_equal(turns, ntaps);
}

static void test_rule_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++)
		run_case(&CASES[i]);
}

/* ---- the plan in detail ---- */

static void test_plan_detail(void **state)
{
	(void)state;
	dig_level lv;
	dig_plan plan;
	/* m0 free, m1 blocked by stone, m2 in another row, m3 frozen on ice. */
	assert_int_equal(dig_picture("@0 . @1 # i@3/@2 . . . $", 1, 20, &lv), 0);
	dig_state s;
	dig_state_init(&lv, &s);
	s.frozen = 1u << 3;
	assert_true(dig_arrow_plan(&lv, &s, dig_slot_row_left(&lv, 0), &plan));
	assert_int_equal(plan.selected, 0x3);
	assert_int_equal(plan.moves, 0x1);
	assert_int_equal(plan.to[0], dig_cell(&lv, 1, 0));
	assert_int_equal(plan.to[1], dig_cell(&lv, 2, 0)); /* stays */
	assert_int_equal(plan.to[2], dig_cell(&lv, 0, 1)); /* not selected: stays */
	/* Out-of-range slots are never valid. */
	assert_false(dig_arrow_plan(&lv, &s, -1, &plan));
	assert_false(dig_arrow_plan(&lv, &s, dig_slots(&lv), &plan));
	assert_int_equal(plan.moves, 0);
	dig_cmd cmd;
	assert_int_equal(dig_arrow_do(&lv, &s, dig_slots(&lv), &cmd), SF_EINVAL);
}

/* ---- geometry ---- */

static void test_geometry(void **state)
{
	(void)state;
	dig_level lv;
	assert_int_equal(dig_picture("@0 . . ./. . . $/. . . .", 1, 9, &lv), 0);
	assert_int_equal(lv.w, 4);
	assert_int_equal(lv.h, 3);
	assert_int_equal(dig_slots(&lv), 14);
	assert_int_equal(dig_slot_row_left(&lv, 2), 2);
	assert_int_equal(dig_slot_row_right(&lv, 0), 3);
	assert_int_equal(dig_slot_col_top(&lv, 1), 7);
	assert_int_equal(dig_slot_col_bottom(&lv, 3), 13);
	assert_int_equal(dig_slot_default_dir(&lv, 0), DIG_RIGHT);
	assert_int_equal(dig_slot_default_dir(&lv, 5), DIG_LEFT);
	assert_int_equal(dig_slot_default_dir(&lv, 6), DIG_DOWN);
	assert_int_equal(dig_slot_default_dir(&lv, 13), DIG_UP);
	int slot[4];
	dig_slots_of_cell(&lv, dig_cell(&lv, 2, 1), slot);
	assert_int_equal(slot[0], 1);
	assert_int_equal(slot[1], 4);
	assert_int_equal(slot[2], 8);
	assert_int_equal(slot[3], 12);
	int c = dig_cell(&lv, 0, 0);
	assert_int_equal(dig_step(&lv, c, DIG_UP), -1);
	assert_int_equal(dig_step(&lv, c, DIG_LEFT), -1);
	assert_int_equal(dig_step(&lv, c, DIG_RIGHT), 1);
	assert_int_equal(dig_step(&lv, c, DIG_DOWN), 4);
	c = dig_cell(&lv, 3, 2);
	assert_int_equal(dig_step(&lv, c, DIG_RIGHT), -1);
	assert_int_equal(dig_step(&lv, c, DIG_DOWN), -1);
	assert_int_equal(dig_step(&lv, c, 4), -1);
	/* Every grid size: a slot's line is the cells of its row or column,
	 * named through dig_slots_of_cell (left, right, top, bottom). */
	for (int w = 1; w <= DIG_MAX_W; w++)
		for (int h = 1; h <= DIG_MAX_H; h++) {
			lv.w = w;
			lv.h = h;
			uint64_t want[DIG_MAX_ARROWS] = { 0 };
			for (int cell = 0; cell < w * h; cell++) {
				dig_slots_of_cell(&lv, cell, slot);
				for (int k = 0; k < 4; k++)
					want[slot[k]] |= UINT64_C(1) << cell;
			}
			for (int i = 0; i < dig_slots(&lv); i++)
				assert_true(dig_slot_line(&lv, i) == want[i]);
		}
}

/* ---- refusals ---- */

static void test_refusal(void **state)
{
	(void)state;
	dig_level lv;
	dig_state s;
	dig_cmd cmd;
	/* Machine 0 walks onto a treasure that gives the hidden top arrow of
	 * column 1 a use; after tapping it once, it has no uses left. */
	assert_int_equal(dig_picture("@0 t4 ./. . $/@1 . .", 1, 20, &lv), 0);
	assert_int_equal(dig_arrows(&lv, "T1=0 R1=0 B0=0"), 0);
	assert_int_equal(dig_level_check(&lv, NULL), 0);
	dig_state_init(&lv, &s);
	int T1 = dig_slot_col_top(&lv, 1), L0 = dig_slot_row_left(&lv, 0);
	assert_string_equal(dig_arrow_refusal(&lv, &s, T1, false), "the arrow is hidden");
	assert_null(dig_arrow_refusal(&lv, &s, L0, false));
	assert_int_equal(dig_arrow_do(&lv, &s, L0, &cmd), 0);
	assert_null(dig_arrow_refusal(&lv, &s, T1, false));
	assert_int_equal(dig_arrow_do(&lv, &s, T1, &cmd), 0);
	assert_string_equal(dig_arrow_refusal(&lv, &s, T1, true), "the arrow has no uses left");
	assert_string_equal(dig_arrow_refusal(&lv, &s, L0, true), "the arrow has no uses left");
	/* Nobody in the row; nobody able to move; no such slot. */
	int R1 = dig_slot_row_right(&lv, 1), B0 = dig_slot_col_bottom(&lv, 0);
	lv.arrow[R1].uses = 1;
	lv.arrow[B0].uses = 1;
	dig_state_init(&lv, &s);
	assert_string_equal(dig_arrow_refusal(&lv, &s, R1, false),
			    "no unfrozen machine stands in its row");
	assert_null(dig_arrow_refusal(&lv, &s, B0, false));
	int R2 = dig_slot_row_right(&lv, 2);
	assert_string_equal(dig_arrow_refusal(&lv, &s, R2, false),
			    "no machine in its row can move that way");
	assert_string_equal(dig_arrow_refusal(&lv, &s, dig_slots(&lv), false),
			    "the grid has no such arrow");
	s.turns_left = 0;
	assert_string_equal(dig_arrow_refusal(&lv, &s, B0, false), "no turns are left");
	/* Lines: row 1 and column 2 of the 3x3 grid. */
	assert_int_equal(dig_slot_line(&lv, dig_slot_row_left(&lv, 1)), 0x38);
	assert_int_equal(dig_slot_line(&lv, dig_slot_col_bottom(&lv, 2)), 0x124);
	assert_true(dig_slot_is_row(&lv, dig_slot_row_right(&lv, 2)));
	assert_false(dig_slot_is_row(&lv, dig_slot_col_top(&lv, 0)));
}

/* The fullest turn the terrains allow: five machines each entering a
 * treasure over gold at once. Its undo log stays within the bound the
 * engine's dig_set() promises (64 writes for six machines), and undoes. */
static void test_log_bound(void **state)
{
	(void)state;
	dig_level lv;
	assert_int_equal(dig_picture("@0 t15$ @1 t15$ @2 t15$ @3 t15$ @4 t15$", 1, 5, &lv), 0);
	assert_int_equal(dig_level_check(&lv, NULL), 0);
	dig_state s, before;
	dig_cmd cmd;
	dig_state_init(&lv, &s);
	before = s;
	assert_int_equal(dig_arrow_do(&lv, &s, dig_slot_row_left(&lv, 0), &cmd), 0);
	assert_int_equal(cmd.moved, 0x1f);
	assert_true(dig_won(&s));
	assert_true(cmd.nlog >= 3 + 5 * 9 && cmd.nlog <= 64);
	dig_arrow_undo(&s, &cmd);
	assert_memory_equal(&s, &before, sizeof s);
}

/* ---- property: do/undo and replay on random levels ---- */

/* Invariants of any reachable state. */
static void check_invariants(const dig_level *lv, const dig_state *s)
{
	for (int m = 0; m < DIG_MAX_MACHINES; m++) {
		if (m >= lv->machines) {
			assert_int_equal(s->pos[m], 0);
			assert_int_equal(s->prev[m], 0);
			assert_int_equal(s->visited[m], 0);
			continue;
		}
		assert_true(s->pos[m] < lv->w * lv->h);
		assert_true((s->visited[m] >> s->pos[m]) & 1u);
		for (int k = 0; k < m; k++)
			assert_int_not_equal(s->pos[k], s->pos[m]);
	}
	for (int i = dig_slots(lv); i < DIG_MAX_ARROWS; i++)
		assert_int_equal(s->uses[i], 0);
	assert_true(s->frozen < (1u << lv->machines));
}

static void test_do_undo_property(void **state)
{
	(void)state;
	rng r;
	rng_seed(&r, 20240611);
	int total = 0, refused = 0;
	for (int level = 0; level < 400; level++) {
		dig_level lv;
		int w = 2 + (int)rng_below(&r, 5), h = 2 + (int)rng_below(&r, 4);
		int machines = 1 + (int)rng_below(&r, w * h / 2 < 6 ? (uint64_t)(w * h / 2) : 6);
		dig_random_level(&r, w, h, machines, 40, true, &lv);
		/* Plenty of uses so that walks are long. */
		for (int i = 0; i < dig_slots(&lv); i++)
			lv.arrow[i].uses = (uint8_t)rng_below(&r, 6);
		sf_err err;
		if (dig_level_check(&lv, &err) != 0)
			fail_msg("random level %d refused: %s", level, err.msg);

		static dig_state before[DIG_MAX_TURNS + 1];
		static dig_cmd cmds[DIG_MAX_TURNS];
		uint8_t taps[DIG_MAX_TURNS];
		dig_state s, start;
		dig_state_init(&lv, &s);
		start = s;
		check_invariants(&lv, &s);
		int n = 0;
		while (n < DIG_MAX_TURNS) {
			int valid[DIG_MAX_ARROWS], nvalid = 0;
			for (int i = 0; i < dig_slots(&lv); i++) {
				dig_plan plan;
				bool v = dig_arrow_plan(&lv, &s, i, &plan);
				assert_int_equal(v, dig_arrow_valid(&lv, &s, i));
				assert_int_equal(plan.moves & ~plan.selected, 0);
				if (v)
					valid[nvalid++] = i;
				else if (rng_below(&r, 4) == 0) {
					dig_state copy = s;
					dig_cmd cmd;
					assert_int_equal(dig_arrow_do(&lv, &s, i, &cmd), SF_EINVAL);
					assert_memory_equal(&s, &copy, sizeof s);
					refused++;
				}
			}
			if (nvalid == 0)
				break;
			int slot = valid[rng_below(&r, (uint64_t)nvalid)];
			dig_plan plan;
			dig_arrow_plan(&lv, &s, slot, &plan);
			before[n] = s;
			assert_int_equal(dig_arrow_do(&lv, &s, slot, &cmds[n]), 0);
			assert_int_equal(cmds[n].moved, plan.moves);
			for (int m = 0; m < lv.machines; m++)
				assert_int_equal(s.pos[m], plan.to[m]);
			assert_int_equal(s.turns_used, n + 1);
			check_invariants(&lv, &s);
			taps[n++] = (uint8_t)slot;
		}
		total += n;
		dig_state end = s;
		int gold = -1, turns = -1;
		assert_int_equal(dig_replay(&lv, taps, n, &gold, &turns, &err), 0);
		assert_int_equal(turns, n);
		assert_int_equal(gold, __builtin_popcountll(start.gold & ~end.gold));
		for (int i = n - 1; i >= 0; i--) {
			dig_arrow_undo(&s, &cmds[i]);
			assert_memory_equal(&s, &before[i], sizeof s);
		}
		assert_memory_equal(&s, &start, sizeof s);
	}
	assert_true(total > 5000);
	assert_true(refused > 1000);
}

/* ---- replay errors ---- */

static void test_replay_errors(void **state)
{
	(void)state;
	dig_level lv;
	sf_err err;
	assert_int_equal(dig_picture("@0 . $/. . .", 1, 5, &lv), 0);
	int L0 = dig_slot_row_left(&lv, 0);
	uint8_t taps[] = { (uint8_t)L0, (uint8_t)L0 };
	int gold = -1, turns = -1;
	assert_int_equal(dig_replay(&lv, taps, 2, &gold, &turns, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "move 2"));
	assert_true(has_number(err.msg, L0));
	assert_non_null(strstr(err.msg, "no uses left"));

	lv.arrow[L0].uses = 0;
	assert_int_equal(dig_replay(&lv, taps, 1, &gold, &turns, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "move 1"));
	assert_non_null(strstr(err.msg, "hidden"));

	uint8_t bad[] = { 40 };
	assert_int_equal(dig_replay(&lv, bad, 1, &gold, &turns, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "move 1"));
	assert_true(has_number(err.msg, 40));

	assert_int_equal(dig_replay(&lv, taps, 0, &gold, &turns, &err), 0);
	assert_int_equal(gold, 0);
	assert_int_equal(turns, 0);

	lv.w = 0;
	assert_int_equal(dig_replay(&lv, taps, 0, &gold, &turns, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "w:"));
}

/* ---- dig_level_check ---- */

typedef struct bad_case {
	const char *name;
	const char *pic;
	dig_rules rules;
	const char *arrows;
	void (*mutate)(dig_level *lv);
	const char *field; /* the message must contain this */
	const char *also;  /* and this, or NULL */
} bad_case;

static void w_zero(dig_level *lv)
{
	lv->w = 0;
}
static void w_big(dig_level *lv)
{
	lv->w = DIG_MAX_W + 1;
}
static void h_big(dig_level *lv)
{
	lv->h = DIG_MAX_H + 1;
}
static void turns_zero(dig_level *lv)
{
	lv->turns = 0;
}
static void turns_big(dig_level *lv)
{
	lv->turns = DIG_MAX_TURNS + 1;
}
static void machines_zero(dig_level *lv)
{
	lv->machines = 0;
}
static void machines_big(dig_level *lv)
{
	lv->machines = DIG_MAX_MACHINES + 1;
}
static void start_outside(dig_level *lv)
{
	lv->start[1] = (uint8_t)(lv->w * lv->h + 1); /* (1,3) in a 3x3 grid */
}
static void start_shared(dig_level *lv)
{
	lv->start[1] = lv->start[0];
}
static void terrain_unknown(dig_level *lv)
{
	lv->terrain[4] = DIG_T_COUNT;
}
static void unused_arrow(dig_level *lv)
{
	lv->arrow[dig_slots(lv)].uses = 1;
}
static void arrow_dir_bad(dig_level *lv)
{
	lv->arrow[2].dir = 4;
}

#define N NO_RULES
static const bad_case BAD[] = {
	{ "width 0", "@0 $", N, NULL, w_zero, "w:", "1..10" },
	{ "width 11", "@0 $", N, NULL, w_big, "w:", "1..10" },
	{ "height 7", "@0 $", N, NULL, h_big, "h:", "1..6" },
	{ "no turns", "@0 $", N, NULL, turns_zero, "turns:", "1..96" },
	{ "too many turns", "@0 $", N, NULL, turns_big, "turns:", "1..96" },
	{ "no machines", "@0 $", N, NULL, machines_zero, "machines:", "1..6" },
	{ "seven machines", "@0 $", N, NULL, machines_big, "machines:", "1..6" },
	{ "a machine outside the grid", "@0 . ./. @1 ./. . $", N, NULL, start_outside,
	  "machines[1]: cell (1,3) is outside the 3x3 grid", NULL },
	{ "two machines on one cell", "@0 . ./. @1 ./. . $", N, NULL, start_shared, "machines[1]",
	  "machines[0]" },
	{ "gold under a machine", "$@0 . ./. . $", N, NULL, NULL, "machines[0]", "gold" },
	{ "a machine on stone it may not enter", "#@0 . ./. . $", N, NULL, NULL, "machines[0]",
	  "stone" },
	{ "a machine on stone for another machine", "#:2@0 @1 ./. . $", N, NULL, NULL,
	  "machines[0]", "stone" },
	{ "an unknown terrain", "@0 . ./. . ./. . $", N, NULL, terrain_unknown, "terrain at (1,1)",
	  "0..6" },
	{ "mud with a parameter", "@0 .1 ./. . $", N, NULL, NULL, "terrain at (1,0)", "mud" },
	{ "ice with a mask", "@0 i:1 ./. . $", N, NULL, NULL, "terrain at (1,0)", "ice" },
	{ "lava with a parameter", "@0 l3 ./. . $", N, NULL, NULL, "terrain at (1,0)", "lava" },
	{ "web needing no visit", "@0 w0$ ./. . .", N, NULL, NULL, "terrain at (1,0)", "web" },
	{ "web mask naming a missing machine", "@0 w1:2$ ./. . .", N, NULL, NULL,
	  "terrain at (1,0)", "web tmask" },
	{ "stone with a parameter", "@0 #1 ./. . $", N, NULL, NULL, "terrain at (1,0)", "stone" },
	{ "stone mask naming a missing machine", "@0 #:4 ./@1 . $", N, NULL, NULL,
	  "terrain at (1,0)", "stone tmask" },
	{ "treasure giving nothing", "@0 t0 ./. . $", N, NULL, NULL, "terrain at (1,0)",
	  "treasure" },
	{ "treasure mask of 16", "@0 t16 ./. . $", N, NULL, NULL, "terrain at (1,0)", "1..15" },
	{ "treasure with a machine mask", "@0 t1:1 ./. . $", N, NULL, NULL, "terrain at (1,0)",
	  "treasure tmask" },
	{ "energy 0", "@0 e0 ./. . $", N, NULL, NULL, "terrain at (1,0)", "energy" },
	{ "energy 10", "@0 e10 ./. . $", N, NULL, NULL, "terrain at (1,0)", "1..9" },
	{ "no gold", "@0 . ./. . .", N, NULL, NULL, "gold", "at least one" },
	{ "gold orders repeated", "@0 $1 $1/. . .", IN_ORDER, NULL, NULL, "gold at (2,0)",
	  "twice" },
	{ "gold order out of range", "@0 $1 $3/. . .", IN_ORDER, NULL, NULL, "gold at (2,0)",
	  "1..2" },
	{ "an arrow pointing out of the grid", "@0 . ./. . $", N, "L0=1<", NULL, "arrows[0]",
	  "any_direction" },
	{ "an arrow with no direction", "@0 . ./. . $", ANY_DIR, NULL, arrow_dir_bad, "arrows[2]",
	  "0..3" },
	{ "a slot the grid does not have", "@0 . ./. . $", N, NULL, unused_arrow, "arrows[10]",
	  "zero" },
};
#undef N

static void test_level_check(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
		const bad_case *bc = &BAD[i];
		dig_level lv;
		sf_err err;
		if (dig_picture(bc->pic, 1, 10, &lv) != 0 || dig_arrows(&lv, bc->arrows) != 0)
			fail_msg("%s: bad picture", bc->name);
		lv.rules = bc->rules;
		if (bc->mutate)
			bc->mutate(&lv);
		memset(&err, 0, sizeof err);
		if (dig_level_check(&lv, &err) != SF_EINVAL)
			fail_msg("%s: accepted", bc->name);
		if (!strstr(err.msg, bc->field) || (bc->also && !strstr(err.msg, bc->also)))
			fail_msg("%s: message \"%s\" lacks \"%s\" / \"%s\"", bc->name, err.msg,
				 bc->field, bc->also ? bc->also : "");
		assert_int_equal(err.code, SF_EINVAL);
	}
	/* Good levels with every terrain and rule pass. */
	const char *good[] = {
		"@0 #:1 w2:1$ t15/@1 i l e9$2",
		"@0 . $/. . .",
		"$ @0 @1 @2 @3 @4 @5",
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		dig_level lv;
		sf_err err;
		assert_int_equal(dig_picture(good[i], 1, DIG_MAX_TURNS, &lv), 0);
		if (dig_level_check(&lv, &err) != 0)
			fail_msg("good level %zu refused: %s", i, err.msg);
	}
	/* gold_in_order with orders 1..n in any cell order passes. */
	dig_level lv;
	sf_err err;
	assert_int_equal(dig_picture("@0 $3 $1/$2 . .", 1, 5, &lv), 0);
	lv.rules.gold_in_order = true;
	assert_int_equal(dig_level_check(&lv, &err), 0);
	/* any_direction allows every direction. */
	assert_int_equal(dig_picture("@0 . ./. . $", 1, 5, &lv), 0);
	lv.rules.any_direction = true;
	for (int i = 0; i < dig_slots(&lv); i++)
		lv.arrow[i].dir = (uint8_t)(i % 4);
	assert_int_equal(dig_level_check(&lv, &err), 0);
	/* The largest grid passes. */
	memset(&lv, 0, sizeof lv);
	lv.w = DIG_MAX_W;
	lv.h = DIG_MAX_H;
	lv.machines = 1;
	lv.turns = 1;
	lv.start[0] = 0;
	lv.gold[DIG_MAX_W * DIG_MAX_H - 1] = 1;
	for (int i = 0; i < dig_slots(&lv); i++)
		lv.arrow[i].dir = (uint8_t)dig_slot_default_dir(&lv, i);
	assert_int_equal(dig_level_check(&lv, &err), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule_table),    cmocka_unit_test(test_plan_detail),
		cmocka_unit_test(test_geometry),      cmocka_unit_test(test_refusal),
		cmocka_unit_test(test_log_bound),     cmocka_unit_test(test_do_undo_property),
		cmocka_unit_test(test_replay_errors), cmocka_unit_test(test_level_check),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
