(define (problem basic-problem)
 (:domain basic-domain)
 (:objects
   apple - item
   cabinet - container
   counter_top dining_table - receptacle
 )
 (:init
              (on knife counter_top)
              (on apple counter_top)
              (hands_free)
 )
 (:goal (and 
           (in knife cabinet)
           (on apple dining_table)
           (not (cabinet_open cabinet))
        )
 )
)
