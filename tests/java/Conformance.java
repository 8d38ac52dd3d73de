// The official Java client (kafka-clients) against a broker: one scenario per run.
//
//     java -cp <jars>:<classes> Conformance SCENARIO BOOTSTRAP
//
// Each scenario prints "PASS <what it saw>" and exits 0, or prints "FAIL <why>" and exits 1.
// The Python test (tests/java/test_java_client.py) starts minikafka and runs every scenario.

import java.time.Duration;
import java.util.*;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.*;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.serialization.*;

public class Conformance {
    static String bootstrap;

    public static void main(String[] args) throws Exception {
        bootstrap = args[1];
        String result;
        try {
            switch (args[0]) {
                case "produce-consume-classic": result = produceConsume("classic"); break;
                case "produce-consume-consumer": result = produceConsume("consumer"); break;
                case "admin": result = admin(); break;
                case "transactions": result = transactions(); break;
                case "fencing": result = fencing(); break;
                case "transactions-v2": result = transactionsV2(); break;
                case "share": result = share(); break;
                case "share-renew": result = shareRenew(); break;
                case "join-classic-group": result = joinClassicGroup(); break;
                default: throw new IllegalArgumentException("no scenario " + args[0]);
            }
        } catch (Throwable e) {
            System.out.println("FAIL " + e);
            System.exit(1);
            return;
        }
        System.out.println("PASS " + result);
        System.exit(0);
    }

    static void check(boolean ok, String what) {
        if (!ok) throw new AssertionError(what);
    }

    interface ZombieWork {
        void run() throws Exception;
    }

    /** What a fenced producer's work ended with: it must be a fencing error. */
    static Throwable fencingError(ZombieWork work) throws Exception {
        Throwable seen = null;
        try {
            work.run();
        } catch (ExecutionException e) {
            seen = e.getCause();
        } catch (KafkaException e) {
            seen = e;
        }
        check(seen instanceof ProducerFencedException || seen instanceof InvalidProducerEpochException,
                "the zombie got " + seen + ", not a fencing error");
        return seen;
    }

    static Properties props(Object... pairs) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        for (int i = 0; i < pairs.length; i += 2) p.put(pairs[i], pairs[i + 1]);
        return p;
    }

    static void createTopic(Admin admin, String name, int partitions) throws Exception {
        admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get();
    }

    static KafkaProducer<String, String> producer(Object... extra) {
        Properties p = props("acks", "all", "enable.idempotence", "true",
                "key.serializer", StringSerializer.class.getName(), "value.serializer", StringSerializer.class.getName());
        for (int i = 0; i < extra.length; i += 2) p.put(extra[i], extra[i + 1]);
        return new KafkaProducer<>(p);
    }

    static KafkaConsumer<String, String> consumer(String group, Object... extra) {
        Properties p = props("group.id", group, "auto.offset.reset", "earliest", "enable.auto.commit", "false",
                "key.deserializer", StringDeserializer.class.getName(),
                "value.deserializer", StringDeserializer.class.getName());
        for (int i = 0; i < extra.length; i += 2) p.put(extra[i], extra[i + 1]);
        return new KafkaConsumer<>(p);
    }

    static List<ConsumerRecord<String, String>> readAll(KafkaConsumer<String, String> c, int expected) {
        List<ConsumerRecord<String, String>> out = new ArrayList<>();
        long deadline = System.currentTimeMillis() + 30_000;
        while (out.size() < expected && System.currentTimeMillis() < deadline) {
            for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) out.add(r);
        }
        return out;
    }

    // Online migration (KIP-848): a consumer-protocol member joins the group "java-migration", which a
    // classic consumer (started by the Python test) holds with all four partitions of "java-migration".
    // The group is upgraded to a consumer group, and the two members share the partitions.
    static String joinClassicGroup() throws Exception {
        String name = "java-migration";
        try (Admin admin = Admin.create(props());
             KafkaConsumer<String, String> c = consumer(name, "group.protocol", "consumer")) {
            c.subscribe(List.of(name));
            long deadline = System.currentTimeMillis() + 60_000;
            while (c.assignment().size() != 2 && System.currentTimeMillis() < deadline) c.poll(Duration.ofMillis(200));
            check(c.assignment().size() == 2, "the Java member owns " + c.assignment() + ", not two of four");
            ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(name)).describedGroups().get(name).get();
            check(d.type() == GroupType.CONSUMER, "the group is " + d.type() + ", not upgraded");
            check(d.members().size() == 2, "the group has " + d.members().size() + " members");
            return "joined the classic group: a " + d.type() + " group of 2, owning " + c.assignment().size() + " of 4";
        }
    }

    // acks=all idempotent keyed writes, read back by a group of the given protocol, committed, and
    // the committed offsets read again through the admin client.
    static String produceConsume(String protocol) throws Exception {
        String topic = "java-" + protocol;
        try (Admin admin = Admin.create(props())) {
            createTopic(admin, topic, 3);
            try (KafkaProducer<String, String> p = producer()) {
                for (int i = 0; i < 90; i++) p.send(new ProducerRecord<>(topic, "user-" + (i % 9), "signup " + i)).get();
            }
            String group = "java-group-" + protocol;
            int read;
            Map<String, Set<Integer>> partitionsOfKey = new HashMap<>();
            try (KafkaConsumer<String, String> c = consumer(group, "group.protocol", protocol)) {
                c.subscribe(List.of(topic));
                List<ConsumerRecord<String, String>> records = readAll(c, 90);
                read = records.size();
                for (ConsumerRecord<String, String> r : records)
                    partitionsOfKey.computeIfAbsent(r.key(), k -> new HashSet<>()).add(r.partition());
                c.commitSync();
            }
            check(read == 90, "read " + read + " of 90 records");
            check(partitionsOfKey.values().stream().allMatch(s -> s.size() == 1), "a key went to two partitions");
            Map<TopicPartition, OffsetAndMetadata> committed =
                    admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            long total = committed.values().stream().mapToLong(OffsetAndMetadata::offset).sum();
            check(total == 90, "committed offsets add up to " + total);
            return "group.protocol=" + protocol + " read 90, committed " + total;
        }
    }

    // Topics created, described, configured (APPEND on a default) and deleted by name; the cluster described.
    static String admin() throws Exception {
        try (Admin admin = Admin.create(props())) {
            createTopic(admin, "java-admin", 2);
            TopicDescription d = admin.describeTopics(List.of("java-admin")).allTopicNames().get().get("java-admin");
            check(d.partitions().size() == 2, "partitions " + d.partitions().size());
            ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, "java-admin");
            admin.incrementalAlterConfigs(Map.of(res, List.of(new AlterConfigOp(
                    new ConfigEntry("cleanup.policy", "compact"), AlterConfigOp.OpType.APPEND)))).all().get();
            String policy = admin.describeConfigs(List.of(res)).all().get().get(res).get("cleanup.policy").value();
            check(policy.equals("delete,compact"), "cleanup.policy after APPEND compact: " + policy);
            int brokers = admin.describeCluster().nodes().get().size();
            admin.deleteTopics(List.of("java-admin")).all().get();
            Set<String> left = admin.listTopics().names().get();
            check(!left.contains("java-admin"), "the topic is still listed after deleteTopics");
            return "create, describe, APPEND, delete by name; " + brokers + " broker(s)";
        }
    }

    // A committed and an aborted transaction: read_committed sees only the committed records.
    static String transactions() throws Exception {
        String topic = "java-txn";
        try (Admin admin = Admin.create(props())) {
            createTopic(admin, topic, 2);
        }
        try (KafkaProducer<String, String> p = producer("transactional.id", "java-txn-1")) {
            p.initTransactions();
            p.beginTransaction();
            for (int i = 0; i < 10; i++) p.send(new ProducerRecord<>(topic, "k" + i, "committed " + i));
            p.commitTransaction();
            p.beginTransaction();
            for (int i = 0; i < 10; i++) p.send(new ProducerRecord<>(topic, "k" + i, "aborted " + i));
            p.flush();
            p.abortTransaction();
        }
        try (KafkaConsumer<String, String> c = consumer("java-txn-reader", "isolation.level", "read_committed")) {
            c.subscribe(List.of(topic));
            List<ConsumerRecord<String, String>> records = readAll(c, 10);
            records.addAll(readAll(c, 1));  // anything after the committed ten would be an aborted record
            check(records.size() == 10, "read_committed read " + records.size() + " records, not 10");
            check(records.stream().allMatch(r -> r.value().startsWith("committed")), "an aborted record was read");
        }
        return "10 committed, 10 aborted, read_committed reads the 10";
    }

    // A second producer with the same transactional.id fences the first: its next send fails
    // with a fencing error, not "not added to the transaction".
    static String fencing() throws Exception {
        String topic = "java-fence";
        try (Admin admin = Admin.create(props())) {
            createTopic(admin, topic, 1);
        }
        KafkaProducer<String, String> zombie = producer("transactional.id", "java-fence");
        zombie.initTransactions();
        zombie.beginTransaction();
        zombie.send(new ProducerRecord<>(topic, "k", "first")).get();
        try (KafkaProducer<String, String> successor = producer("transactional.id", "java-fence")) {
            successor.initTransactions();
            Throwable seen = fencingError(() -> {
                zombie.send(new ProducerRecord<>(topic, "k", "second")).get();
                zombie.commitTransaction();
            });
            successor.beginTransaction();
            successor.send(new ProducerRecord<>(topic, "k", "from the successor"));
            successor.commitTransaction();
            return "zombie told " + seen.getClass().getSimpleName() + "; the successor commits";
        } finally {
            zombie.close(Duration.ofSeconds(5));
        }
    }

    // Consume-transform-produce in four transactions (commit, abort, commit, commit), each also
    // committing the input offsets except the third: the group's offsets move only with a commit
    // and read_committed sees only committed output. Then a second instance with the same
    // transactional.id fences the first. The Python test reads the producer epochs from the log: with
    // transaction protocol v2 each transaction has its own epoch.
    static String transactionsV2() throws Exception {
        String in = "java-v2-in", out = "java-v2-out", group = "java-v2-app";
        TopicPartition source = new TopicPartition(in, 0);
        try (Admin admin = Admin.create(props())) {
            createTopic(admin, in, 1);
            createTopic(admin, out, 1);
        }
        try (KafkaProducer<String, String> p = producer()) {
            for (int i = 0; i < 8; i++) p.send(new ProducerRecord<>(in, "k" + i, "in " + i));
        }
        KafkaProducer<String, String> app = producer("transactional.id", "java-v2");
        try (KafkaConsumer<String, String> c = consumer(group, "isolation.level", "read_committed");
             Admin admin = Admin.create(props())) {
            c.subscribe(List.of(in));
            check(readAll(c, 8).size() == 8, "the input was not read");
            app.initTransactions();
            String[] outcome = {"commit", "abort", "commit", "commit"};
            long[] offsets = {2, 4, -1, 8};
            List<Long> seen = new ArrayList<>();
            for (int t = 0; t < outcome.length; t++) {
                app.beginTransaction();
                for (int i = 0; i < 3; i++)
                    app.send(new ProducerRecord<>(out, "k" + i, outcome[t] + " " + t + "." + i));
                if (offsets[t] >= 0)
                    app.sendOffsetsToTransaction(Map.of(source, new OffsetAndMetadata(offsets[t])), c.groupMetadata());
                app.flush();
                if (outcome[t].equals("commit")) app.commitTransaction(); else app.abortTransaction();
                OffsetAndMetadata committed = admin.listConsumerGroupOffsets(group)
                        .partitionsToOffsetAndMetadata().get().get(source);
                seen.add(committed == null ? -1L : committed.offset());
            }
            check(seen.equals(List.of(2L, 2L, 2L, 8L)), "the group's committed offsets went " + seen);
        }
        try (KafkaConsumer<String, String> c = consumer("java-v2-reader", "isolation.level", "read_committed")) {
            c.subscribe(List.of(out));
            List<ConsumerRecord<String, String>> records = readAll(c, 9);
            records.addAll(readAll(c, 1));
            check(records.size() == 9, "read_committed read " + records.size() + " records, not 9");
            check(records.stream().allMatch(r -> r.value().startsWith("commit")), "an aborted record was read");
        }
        try (KafkaProducer<String, String> successor = producer("transactional.id", "java-v2")) {
            successor.initTransactions();
            Throwable seen = fencingError(() -> {
                app.beginTransaction();
                app.send(new ProducerRecord<>(out, "k", "zombie")).get();
                app.commitTransaction();
            });
            return "offsets 2, 2, 2, 8; read_committed reads the 9 committed; zombie told "
                    + seen.getClass().getSimpleName();
        } finally {
            app.close(Duration.ofSeconds(5));
        }
    }

    // A share group (KIP-932): records acquired, acknowledged, and not delivered again.
    static String share() throws Exception {
        String topic = "java-share", group = "java-share-group";
        try (Admin admin = Admin.create(props())) {
            createTopic(admin, topic, 1);
            ConfigResource res = new ConfigResource(ConfigResource.Type.GROUP, group);
            admin.incrementalAlterConfigs(Map.of(res, List.of(new AlterConfigOp(
                    new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET)))).all().get();
        }
        try (KafkaProducer<String, String> p = producer()) {
            for (int i = 0; i < 20; i++) p.send(new ProducerRecord<>(topic, "k" + i, "job " + i)).get();
        }
        Properties sp = props("group.id", group, "share.acknowledgement.mode", "explicit",
                "key.deserializer", StringDeserializer.class.getName(),
                "value.deserializer", StringDeserializer.class.getName());
        Set<String> seen = new HashSet<>();
        try (KafkaShareConsumer<String, String> c = new KafkaShareConsumer<>(sp)) {
            c.subscribe(List.of(topic));
            long deadline = System.currentTimeMillis() + 30_000;
            while (seen.size() < 20 && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) {
                    seen.add(r.value());
                    c.acknowledge(r, AcknowledgeType.ACCEPT);
                }
                c.commitSync();
            }
        }
        check(seen.size() == 20, "the share consumer got " + seen.size() + " of 20 records");
        return "share group read and acknowledged 20";
    }

    // KIP-1222: a record kept past its acquisition lock by renewing the lock, then accepted.
    static String shareRenew() throws Exception {
        String topic = "java-share-renew", group = "java-share-renew-group";
        try (Admin admin = Admin.create(props())) {
            createTopic(admin, topic, 1);
            ConfigResource res = new ConfigResource(ConfigResource.Type.GROUP, group);
            admin.incrementalAlterConfigs(Map.of(res, List.of(
                    new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("share.renew.acknowledge.enable", "true"),
                            AlterConfigOp.OpType.SET)))).all().get();
        }
        try (KafkaProducer<String, String> p = producer()) {
            p.send(new ProducerRecord<>(topic, "k", "slow job")).get();
        }
        Properties sp = props("group.id", group, "share.acknowledgement.mode", "explicit", "max.poll.records", "1",
                "key.deserializer", StringDeserializer.class.getName(),
                "value.deserializer", StringDeserializer.class.getName());
        try (KafkaShareConsumer<String, String> c = new KafkaShareConsumer<>(sp)) {
            c.subscribe(List.of(topic));
            ConsumerRecord<String, String> held = null;
            long deadline = System.currentTimeMillis() + 30_000;
            while (held == null && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) held = r;
            }
            check(held != null, "the share consumer got no record");
            int lockMs = c.acquisitionLockTimeoutMs().orElse(0);
            check(lockMs > 0, "no acquisition lock duration was answered");
            for (int i = 0; i < 3; i++) {  // held for twice the lock in all
                Thread.sleep(lockMs * 2 / 3);
                c.acknowledge(held, AcknowledgeType.RENEW);
                for (Optional<KafkaException> e : c.commitSync().values())
                    check(e.isEmpty(), "renewing failed: " + e);
                long offset = held.offset();  // a renewed record comes back from the next poll
                held = null;
                for (int tries = 0; held == null && tries < 20; tries++)
                    for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(50)))
                        if (r.offset() == offset) held = r;
                check(held != null, "the renewed record did not come back from poll");
            }
            c.acknowledge(held, AcknowledgeType.ACCEPT);
            for (Optional<KafkaException> e : c.commitSync().values())
                check(e.isEmpty(), "accepting the renewed record failed: " + e);
            check(held.deliveryCount().orElse((short) 0) == 1, "delivered " + held.deliveryCount() + " times");
        }
        return "share record renewed past its lock three times, then accepted";
    }
}
