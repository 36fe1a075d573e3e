/*
 * HTTP load generator for rubickd submissions (bench_daemon.sh): C client
 * threads, each on its own keep-alive connection, POST /v1/jobs for a fixed
 * time. With --rate R the threads together send R requests per second on a
 * fixed schedule and latency is measured from the scheduled send time (no
 * coordinated omission); without it they send as fast as replies come.
 * A request counts only when answered 201 (durable: rubickd replies after
 * the commit). Prints rate, p50, p99 and max latency.
 *
 * usage: bench_daemon_load --url URL --token TOKEN [--threads C] [--seconds S] [--rate R]
 */
#include <curl/curl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct worker {
	int id;
	const char *url, *token;
	double seconds, rate; /* per thread; 0 = closed loop */
	double *lat_ms;
	long n, cap, failed;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t discard(char *p, size_t s, size_t n, void *ctx)
{
	(void)p;
	(void)ctx;
	return s * n;
}

static void *run(void *arg)
{
	struct worker *w = arg;
	CURL *c = curl_easy_init();
	char url[1024], auth[300], body[256];
	struct curl_slist *h = NULL;
	if (!strncmp(w->url, "unix:", 5)) {
		curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, w->url + 5);
		snprintf(url, sizeof(url), "http://localhost/v1/jobs");
	} else {
		snprintf(url, sizeof(url), "%s/v1/jobs", w->url);
	}
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", w->token);
	h = curl_slist_append(h, auth);
	h = curl_slist_append(h, "Content-Type: application/json");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
	double t0 = now_s(), next = t0;
	for (long k = 0;; k++) {
		double t = now_s();
		if (t - t0 >= w->seconds)
			break;
		if (w->rate > 0) {
			if (next > t) {
				struct timespec ts = {0, (long)((next - t) * 1e9)};
				nanosleep(&ts, NULL);
			}
			t = next; /* latency from the scheduled send time */
			next += 1.0 / w->rate;
		}
		snprintf(body, sizeof(body),
			 "{\"name\":\"load-%d-%ld\",\"model\":\"bert\",\"gpus\":8,"
			 "\"iterations\":100,\"command\":\"true\"}",
			 w->id, k);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		CURLcode rc = curl_easy_perform(c);
		long code = 0;
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
		double ms = (now_s() - t) * 1e3;
		if (rc != CURLE_OK || code != 201) {
			w->failed++;
			continue;
		}
		if (w->n == w->cap) {
			w->cap = w->cap ? 2 * w->cap : 4096;
			w->lat_ms = realloc(w->lat_ms, (size_t)w->cap * sizeof(double));
			if (!w->lat_ms)
				break;
		}
		w->lat_ms[w->n++] = ms;
	}
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	return NULL;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	const char *url = NULL, *token = NULL;
	int threads = 16;
	double seconds = 10, rate = 0;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--url"))
			url = argv[i + 1];
		else if (!strcmp(argv[i], "--token"))
			token = argv[i + 1];
		else if (!strcmp(argv[i], "--threads"))
			threads = (int)strtol(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--seconds"))
			seconds = strtod(argv[i + 1], NULL);
		else if (!strcmp(argv[i], "--rate"))
			rate = strtod(argv[i + 1], NULL);
		else
			url = NULL, i = argc;
	}
	if (!url || !token || threads < 1 || threads > 1024 || seconds <= 0 || rate < 0) {
		fprintf(stderr, "usage: bench_daemon_load --url URL --token TOKEN [--threads C]"
				" [--seconds S] [--rate R]\n");
		return 2;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	struct worker *w = calloc((size_t)threads, sizeof(*w));
	pthread_t *th = calloc((size_t)threads, sizeof(*th));
	double t0 = now_s();
	for (int i = 0; i < threads; i++) {
		w[i] = (struct worker){.id = i, .url = url, .token = token, .seconds = seconds,
				       .rate = rate / threads};
		pthread_create(&th[i], NULL, run, &w[i]);
	}
	long n = 0, failed = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		n += w[i].n;
		failed += w[i].failed;
	}
	double wall = now_s() - t0;
	double *all = malloc((size_t)(n ? n : 1) * sizeof(double));
	long k = 0;
	for (int i = 0; i < threads; i++) {
		memcpy(all + k, w[i].lat_ms, (size_t)w[i].n * sizeof(double));
		k += w[i].n;
		free(w[i].lat_ms);
	}
	qsort(all, (size_t)n, sizeof(double), cmp_d);
	double p50 = n ? all[n / 2] : NAN, p99 = n ? all[(long)floor(0.99 * (double)(n - 1))] : NAN;
	printf("submissions: %ld acknowledged (201) in %.2f s = %.0f/s, %ld failed; "
	       "latency p50 %.2f ms, p99 %.2f ms, max %.2f ms (%d connections%s)\n",
	       n, wall, (double)n / wall, failed, p50, p99, n ? all[n - 1] : NAN, threads,
	       rate > 0 ? ", paced" : ", closed loop");
	free(all);
	free(w);
	free(th);
	curl_global_cleanup();
	return failed ? 1 : 0;
}
