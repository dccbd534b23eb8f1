(define (problem basic-problem)
 (:domain basic-domain)
 (:objects
   apple - item
   coffee_machine - appliance
   counter_top dining_table - receptacle
 )
 (:init
              (on mug counter_top)
              (on apple counter_top)
              (hands_free)
 )
 (:goal (and 
           (has_coffee mug)
           (on mug dining_table)
           (on apple dining_table)
           (not (coffee_machine_on coffee_machine))
        )
 )
)
