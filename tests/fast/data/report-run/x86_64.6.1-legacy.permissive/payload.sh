#!/bin/sh
# probe steps of scenario permissive
exec /harness/selinux-probe state:boot write:one:1 write:zero:0 write:junk:abc write:empty:- write:big:@4096 write:offset:1:1 write:nonroot:1:0:65534 state:after 'klog:deprecated:Runtime disable is deprecated' 'klog:pruned:wrote to disable. This is no longer supported' cmd:getenforce:/usr/sbin/getenforce 'cmd:advisor:/usr/local/sbin/selinux-migrate-check --summary' hooks:/sys/kernel/debug/page_tables/kernel
