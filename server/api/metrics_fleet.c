// SPDX-License-Identifier: GPL-2.0
/*
 * Fleet gauges for GET /metrics (metrics_fleet.h): pure, from the read
 * API's JSON documents to Prometheus text.
 */
#include <errno.h>
#include <stddef.h>

#include "api/metrics_fleet.h"

/* A JSON member as an integer, 0 when absent or not a number. */
static long long num(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	return json_is_integer(v) ? (long long)json_integer_value(v) : 0;
}

static int hosts_by_mode(struct twl_buf *b, const json_t *summary)
{
	static const char *const modes[] = { "v1", "hybrid", "v2", "unknown" };
	const json_t *hosts = json_object_get(summary, "hosts");
	const json_t *by = json_object_get(hosts, "by_cgroup_mode");
	int ret;

	ret = twl_buf_printf(
		b,
		"# HELP twilight_hosts Hosts that reported in the last 30 days, by the cgroup mode they report.\n"
		"# TYPE twilight_hosts gauge\n");
	for (size_t i = 0; !ret && i < sizeof(modes) / sizeof(modes[0]); i++)
		ret = twl_buf_printf(
			b, "twilight_hosts{cgroup_mode=\"%s\"} %lld\n",
			modes[i], num(by, modes[i]));
	if (!ret)
		ret = twl_buf_printf(
			b,
			"# HELP twilight_hosts_known Hosts that ever reported and were not pruned.\n"
			"# TYPE twilight_hosts_known gauge\ntwilight_hosts_known %lld\n",
			num(hosts, "total"));
	return ret;
}

/* The per-feature series; @ids are catalog ids (no quoting needed). */
static int features(struct twl_buf *b, const json_t *summary)
{
	static const struct {
		const char *kind, *key;
	} kinds[] = {
		{ "using", "hosts_30d" },
		{ "configures", "hosts_configuring_30d" },
		{ "listens", "hosts_listening_30d" },
		{ "reads_only", "hosts_reading_only_30d" },
	};
	const json_t *feats = json_object_get(summary, "features");
	const json_t *f;
	size_t i;
	int ret;

	ret = twl_buf_printf(
		b,
		"# HELP twilight_feature_hosts Hosts with evidence of a deprecated feature in the last 30 days, by kind of use (using = configures or listens or a kernel warning; reads_only never counts as using).\n"
		"# TYPE twilight_feature_hosts gauge\n");
	json_array_foreach(feats, i, f)
	{
		const char *id = json_string_value(json_object_get(f, "id"));

		for (size_t k = 0; id && !ret && k < 4; k++)
			ret = twl_buf_printf(
				b,
				"twilight_feature_hosts{feature=\"%s\",kind=\"%s\"} %lld\n",
				id, kinds[k].kind, num(f, kinds[k].key));
	}
	if (!ret)
		ret = twl_buf_printf(
			b,
			"# HELP twilight_feature_warnings Kernel deprecation warnings of a feature stored, fleet-wide.\n"
			"# TYPE twilight_feature_warnings gauge\n");
	json_array_foreach(feats, i, f)
	{
		const char *id = json_string_value(json_object_get(f, "id"));

		if (id && !ret)
			ret = twl_buf_printf(
				b,
				"twilight_feature_warnings{feature=\"%s\"} %lld\n",
				id, num(f, "warnings"));
	}
	return ret;
}

static int agents(struct twl_buf *b, const json_t *health)
{
	static const char *const parts[] = { "silent",	     "records_lost",
					     "key_rejected", "probe_missing",
					     "cloned",	     "boot_uncovered" };
	const json_t *cat = json_object_get(health, "catalog");
	int ret;

	ret = twl_buf_printf(
		b,
		"# HELP twilight_agents Hosts in each part of the health page (a host may be in several).\n"
		"# TYPE twilight_agents gauge\n");
	for (size_t i = 0; !ret && i < sizeof(parts) / sizeof(parts[0]); i++)
		ret = twl_buf_printf(
			b, "twilight_agents{state=\"%s\"} %lld\n", parts[i],
			num(json_object_get(health, parts[i]), "count"));
	if (!ret)
		ret = twl_buf_printf(
			b,
			"twilight_agents{state=\"catalog_older\"} %lld\n"
			"twilight_agents{state=\"catalog_newer\"} %lld\n",
			num(json_object_get(cat, "older"), "count"),
			num(json_object_get(cat, "newer"), "count"));
	return ret;
}

/* Contract: see metrics_fleet.h. */
int twl_metrics_render_fleet(struct twl_buf *b, const json_t *summary,
			     const json_t *health)
{
	int ret = 0;

	if (summary)
		ret = hosts_by_mode(b, summary);
	if (summary && !ret)
		ret = features(b, summary);
	if (health && !ret)
		ret = agents(b, health);
	return ret;
}
