/*
 * test_digger_terrain.c - the terrain registry (core/digger/terrain.c) and
 * the contract every terrain module keeps (terrain.h): each type has one
 * module with its JSON name and a check hook, the placement order puts ice
 * and lava before web and energy last, and entering a cell changes only
 * what the solver's keys and the star rule expect, with every gift of uses
 * or turns one-shot, and web_left worn down one counted visit at a time.
 * The rules themselves are in test_digger_rules.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "digger/digger.h"
#include "digger/terrain.h"
#include "digger_support.h"

/*
 * The contract the solver and the star rule build on (terrain.h,
 * dig_terrain_gift): for every module and every parameter its check
 * accepts, entering changes only the mover's frozen bit or everybody's,
 * arrow uses, turns left, and the cell's own web_left and spent bit; and a
 * hook that gives uses or turns marks its cell spent and gives nothing on
 * a second visit. Found by trying parameters, so no type is named here.
 */
static void test_terrain_contract(void **state)
{
	(void)state;
	int modules_with_gifts = 0;
	for (int t = 0; t < DIG_T_COUNT; t++) {
		const dig_terrain_ops *ops = dig_terrain_of(t);
		int accepted = 0;
		bool gives = false;
		for (int param = 0; param < 16; param++)
			for (int mask = 0; mask < 4; mask++) {
				dig_level lv;
				assert_int_equal(dig_picture("@0 $ . ./@1 . . .", 1, 10, &lv), 0);
				int cell = dig_cell(&lv, 2, 0);
				lv.terrain[cell] = (uint8_t)t;
				lv.tparam[cell] = (uint8_t)param;
				lv.tmask[cell] = (uint8_t)mask;
				if (dig_level_check(&lv, NULL) != 0)
					continue;
				accepted++;
				dig_state s, after;
				dig_state_init(&lv, &s);
				dig_gift first, second;
				dig_terrain_gift(&lv, &s, cell, &first);
				after = s;
				if (ops->on_enter) {
					dig_cmd cmd = { .nlog = 0 };
					ops->on_enter(&lv, &after, &cmd, cell, 0);
				}
				dig_terrain_gift(&lv, &after, cell, &second);
				/* can_enter reads the level only (the solver's
				 * lone-machine test asks it once, at the start). */
				for (int m = 0; m < 2 && ops->can_enter; m++) {
					dig_state w = after;
					w.frozen = 3;
					w.spent = ~UINT64_C(0);
					w.turns_left = 1;
					w.pos[m] = (uint8_t)dig_cell(&lv, 3, 1);
					memset(w.uses, 0, sizeof w.uses);
					if (ops->can_enter(&lv, &w, cell, m) !=
					    ops->can_enter(&lv, &s, cell, m))
						fail_msg("%s (param %d, mask %d): can_enter for "
							 "machine %d depends on the state",
							 ops->name, param, mask, m);
				}
				if (first.slots || first.turns) {
					gives = true;
					assert_true(first.one_shot);
					assert_int_equal(second.slots, 0);
					assert_int_equal(second.turns, 0);
				}
				/* web_left as the solver's bound reads it: a visit
				 * lowers it by at most one, by every visit of a
				 * machine dig_terrain_counters names while it is
				 * above 0 and by no other machine's, and a visit
				 * collects only once it is 0. */
				for (int m = 0; m < 2; m++) {
					uint8_t counts = dig_terrain_counters(&lv, &s, cell);
					dig_state v = s;
					for (int visit = 0; visit < 20 && ops->on_enter; visit++) {
						dig_cmd cmd = { .nlog = 0 };
						int was = v.web_left[cell];
						bool take = ops->on_enter(&lv, &v, &cmd, cell, m);
						int now = v.web_left[cell];
						bool counted = (counts >> m) & 1u;
						if (now > was || was - now > 1 ||
						    (was > 0 && counted != (now < was)) ||
						    (take && now != 0))
							fail_msg("%s (param %d, mask %d): visit %d "
								 "by "
								 "machine %d takes web_left %d to "
								 "%d "
								 "(collects %d, counted %d)",
								 ops->name, param, mask, visit + 1,
								 m, was, now, take, counted);
					}
				}
				/* Nothing else changes. */
				dig_state a = s, b = after;
				memset(a.uses, 0, sizeof a.uses);
				memset(b.uses, 0, sizeof b.uses);
				a.frozen = b.frozen = 0;
				a.turns_left = b.turns_left = 0;
				a.web_left[cell] = b.web_left[cell] = 0;
				a.spent &= ~(UINT64_C(1) << cell);
				b.spent &= ~(UINT64_C(1) << cell);
				if (memcmp(&a, &b, sizeof a) != 0)
					fail_msg("%s (param %d, mask %d): on_enter changed more "
						 "than "
						 "terrain.h allows",
						 ops->name, param, mask);
			}
		if (accepted == 0)
			fail_msg("%s: no parameter passed its check", ops->name);
		modules_with_gifts += gives;
	}
	assert_true(modules_with_gifts >= 2); /* the probe sees treasure and energy */
}

static void test_registry(void **state)
{
	(void)state;
	static const char *const NAMES[DIG_T_COUNT] = {
		[DIG_T_MUD] = "mud",           [DIG_T_STONE] = "stone", [DIG_T_WEB] = "web",
		[DIG_T_TREASURE] = "treasure", [DIG_T_ICE] = "ice",     [DIG_T_LAVA] = "lava",
		[DIG_T_ENERGY] = "energy",
	};
	unsigned seen = 0;
	for (int t = 0; t < DIG_T_COUNT; t++) {
		const dig_terrain_ops *ops = dig_terrain_of(t);
		assert_non_null(ops);
		assert_string_equal(ops->name, NAMES[t]);
		assert_int_equal(dig_terrain_by_name(NAMES[t]), t);
		assert_non_null(ops->check);
		seen |= 1u << dig_place_order[t];
	}
	assert_int_equal(seen, (1u << DIG_T_COUNT) - 1); /* each type once */
	assert_int_equal(dig_place_order[DIG_T_COUNT - 1], DIG_T_ENERGY);
	int ice = -1, lava = -1, web = -1;
	for (int i = 0; i < DIG_T_COUNT; i++) {
		ice = dig_place_order[i] == DIG_T_ICE ? i : ice;
		lava = dig_place_order[i] == DIG_T_LAVA ? i : lava;
		web = dig_place_order[i] == DIG_T_WEB ? i : web;
	}
	assert_true(ice < web && lava < web);
	assert_null(dig_terrain_of(-1));
	assert_null(dig_terrain_of(DIG_T_COUNT));
	assert_int_equal(dig_terrain_by_name("granite"), -1);
	assert_int_equal(dig_terrain_by_name(NULL), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_terrain_contract),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
